package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	tests := []struct {
		s    string
		max  int
		want string
	}{
		{"echo", 16, "echo"},
		{"echo", 4, "echo"},
		{"abcdefgh", 6, "abc…"},
		{"abcdefgh", 3, "…"},
		{"abcdefgh", 2, "ab"},
		{"abcdefgh", 0, ""},
		{"héllo wörld", 8, "héll…"}, // é is 2 bytes: "héll" is 5, and the ellipsis 3
		{"héllo", 5, "h…"},
		{"日本語テキスト", 9, "日本…"},
		{"a\xffb", 8, "a\uFFFDb"},
		{"\xff\xff\xff", 6, "\uFFFD…"},
		{strings.Repeat("x", 3<<20), 10, "xxxxxxx…"},
	}
	for _, tt := range tests {
		if got := String(tt.s, tt.max); got != tt.want {
			t.Errorf("String(%.20q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
		}
	}
}

func TestStringFitsAllocatesNothing(t *testing.T) {
	s := strings.Repeat("a", 64)
	if n := testing.AllocsPerRun(100, func() { _ = String(s, 64) }); n != 0 {
		t.Errorf("String of a fitting string allocates %v times", n)
	}
}

// FuzzString checks String's promises on any input: valid UTF-8 of at most
// max bytes, s itself when it fits, and otherwise a prefix of s (invalid
// bytes aside) ended by the ellipsis.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "echo", "héllo", "a\xffb", "日本語", strings.Repeat("x", 300)} {
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 1 << 12
		got := String(s, max)
		if len(got) > max && !(max <= 0 && got == "") {
			t.Fatalf("String(%q, %d) = %q: %d bytes", s, max, got, len(got))
		}
		if !utf8.ValidString(got) {
			t.Fatalf("String(%q, %d) = %q: not valid UTF-8", s, max, got)
		}
		if max > 0 && len(s) <= max && utf8.ValidString(s) && got != s {
			t.Fatalf("String(%q, %d) = %q: changed a string that fits", s, max, got)
		}
		if utf8.ValidString(s) && !strings.HasPrefix(s, strings.TrimSuffix(got, Ellipsis)) {
			t.Fatalf("String(%q, %d) = %q: not a prefix", s, max, got)
		}
	})
}
