package skills

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzServedSize checks servedSize against encoding/json and
// encoding/base64: exact for blobs, and for text what encoding/json writes, but for \b
// and \f, which it counts as six bytes each (an upper bound is what a
// limit needs).
func FuzzServedSize(f *testing.F) {
	for _, s := range []string{"", "# Skill\n", "<a href=\"x\">&amp;</a>\t\r\n", "\x00\x01\x1f\b\f", "line\u2028sep\u2029", "日本語"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := servedSize(data, false), int64(base64.StdEncoding.EncodedLen(len(data))); got != want {
			t.Fatalf("blob of %d bytes: servedSize %d, base64 %d", len(data), got, want)
		}
		if !utf8.Valid(data) {
			return // never text
		}
		b, err := json.Marshal(string(data))
		if err != nil {
			t.Fatal(err)
		}
		want := int64(len(b) - 2) // without the quotes
		for _, c := range data {
			if c == '\b' || c == '\f' {
				want += 4 // counted as \u0008 and \u000c
			}
		}
		if got := servedSize(data, true); got != want {
			t.Fatalf("text %q: servedSize %d, want %d (encoding/json's)", data, got, want)
		}
	})
}
