package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/client"
)

func TestTermSafe(t *testing.T) {
	tests := []struct {
		in, want, wantMultiline string
	}{
		{"plain text, ünïcödé 漢字 ✓", "plain text, ünïcödé 漢字 ✓", "plain text, ünïcödé 漢字 ✓"},
		{"two\nlines\tand a tab", `two\x0alines\x09and a tab`, "two\nlines\tand a tab"},
		{"erase\x1b[2K\rfake", `erase\x1b[2K\x0dfake`, `erase\x1b[2K\x0dfake`},
		{"bell\a del\x7f c1\u009b", `bell\x07 del\x7f c1\x9b`, `bell\x07 del\x7f c1\x9b`},
		{"evil\u202ekcilc\u202c.exe", `evil\u202ekcilc\u202c.exe`, `evil\u202ekcilc\u202c.exe`},
		{"zero\u200bwidth\ufeff soft\u00adhyphen \u2066iso\u2069", `zero\u200bwidth\ufeff soft\xadhyphen \u2066iso\u2069`, `zero\u200bwidth\ufeff soft\xadhyphen \u2066iso\u2069`},
		{"line\u2028sep", `line\u2028sep`, `line\u2028sep`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`, `bad \xff\xfe utf8`},
	}
	for _, tt := range tests {
		if got := termSafe(tt.in, false); got != tt.want {
			t.Errorf("termSafe(%q, false) = %q, want %q", tt.in, got, tt.want)
		}
		if got := termSafe(tt.in, true); got != tt.wantMultiline {
			t.Errorf("termSafe(%q, true) = %q, want %q", tt.in, got, tt.wantMultiline)
		}
	}
}

// FuzzTermSafe: whatever a server sends, what termSafe returns is valid
// UTF-8 without a rune a terminal acts on, and a string with none comes
// back unchanged.
func FuzzTermSafe(f *testing.F) {
	for _, s := range []string{"", "plain", "a\x1b]8;;http://evil\x1b\\b", "\u202e\u2066x", "\xff\xc3", "a\nb\tc\r"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, multiline bool) {
		got := termSafe(s, multiline)
		if !utf8.ValidString(got) {
			t.Fatalf("termSafe(%q) = %q, not UTF-8", s, got)
		}
		clean := true
		for i, r := range got {
			if unsafeRune(r, utf8.RuneLen(r), multiline) {
				t.Fatalf("termSafe(%q) = %q keeps %U at %d", s, got, r, i)
			}
		}
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			clean = clean && !unsafeRune(r, n, multiline)
			i += n
		}
		if clean && got != s {
			t.Fatalf("termSafe(%q) = %q, changed a clean string", s, got)
		}
	})
}

// TestAskURLHostile: in URL mode a server hides the real URL behind
// escapes that erase it and print a fake one, or uses a look-alike
// punycode host. The user sees the escapes as text, the host on a line of
// its own, and a warning.
func TestAskURLHostile(t *testing.T) {
	tests := []struct {
		name, url, message string
		want               []string
	}{
		{
			name:    "escape erases the URL",
			url:     "https://evil.example/steal\x1b[2K\x1b[1A\rhttps://bank.example/login",
			message: "Log in\x1b[8m hidden",
			want:    []string{`https://evil.example/steal\x1b[2K\x1b[1A\x0dhttps://bank.example/login`, "not a valid web address", `Log in\x1b[8m hidden`},
		},
		{
			name: "punycode host",
			url:  "https://xn--bnk-sna.example/login",
			want: []string{"  host: xn--bnk-sna.example\n", "warning: the host is an internationalized name (punycode, xn--)"},
		},
		{
			name: "unicode host and user info",
			url:  "http://bank.example@b\u0430nk.example/",
			want: []string{"internationalized name", "user info (bank.example@)", "not https (http)"},
		},
		{
			name: "bidi override in the path",
			url:  "https://good.example/\u202egnp.exe",
			want: []string{`https://good.example/\u202egnp.exe`, "  host: good.example\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			action := newFormAsker(strings.NewReader("n\n"), &out).askURL(tt.message, tt.url)
			if action != actionDecline {
				t.Errorf("action %q, want decline", action)
			}
			shown := out.String()
			for _, w := range tt.want {
				if !strings.Contains(shown, w) {
					t.Errorf("the user does not see %q in:\n%s", w, shown)
				}
			}
			if strings.ContainsAny(shown, "\x1b\r\u202e") {
				t.Errorf("raw escapes reached the terminal: %q", shown)
			}
		})
	}
}

// TestAskFormHostile: every server string of a form (message, titles,
// property names, descriptions, choices, defaults) is shown escaped.
func TestAskFormHostile(t *testing.T) {
	schema := `{"type":"object","properties":{
		"n\u001b[31mame":{"type":"string","title":"T\u202eitle","description":"d\u001b]0;pwned\u0007","default":"x\u001b[2J"},
		"c":{"type":"string","oneOf":[{"const":"a\u009b","title":"A\u200b"}]}
	}}`
	var out bytes.Buffer
	action, _, err := newFormAsker(strings.NewReader("\n1\nn\n"), &out).askForm("hi\x1b[2J\x1b[H", []byte(schema))
	if err != nil || action != actionDecline {
		t.Fatalf("askForm = %q, %v", action, err)
	}
	shown := out.String()
	for _, w := range []string{`hi\x1b[2J\x1b[H`, `T\u202eitle (n\x1b[31mame)`, `d\x1b]0;pwned\x07`, `[x\x1b[2J]`, `A\u200b (a\x9b)`} {
		if !strings.Contains(shown, w) {
			t.Errorf("the user does not see %q in:\n%s", w, shown)
		}
	}
	if strings.ContainsAny(shown, "\x1b\a\u202e\u200b\u009b") {
		t.Errorf("raw escapes reached the terminal: %q", shown)
	}
}

func TestListSummary(t *testing.T) {
	many := make([]string, 10000)
	for i := range many {
		many[i] = strings.Repeat("v", 100)
	}
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"2026-07-28", "2025-11-25"}, "2026-07-28, 2025-11-25"},
		{many[:9], strings.Repeat(strings.Repeat("v", 40)+"..., ", 8) + "... (1 more, 9 in all)"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, client.ListSummary(tt.in, ", ")); diff != "" {
			t.Errorf("ListSummary (-want +got):\n%s", diff)
		}
	}
	if got := client.ListSummary(many, ", "); len(got) > 500 {
		t.Errorf("a list of 10000 versions takes %d bytes", len(got))
	}
}

// TestHostileServerStrings: a server's error message and its list of
// versions reach the terminal escaped and bounded.
func TestHostileServerStrings(t *testing.T) {
	many := make([]string, 20000)
	for i := range many {
		many[i] = fmt.Sprintf("1999-01-%05d", i)
	}
	versions, _ := json.Marshal(many)
	tests := []struct {
		name, discover, other string
		want                  string
	}{
		{
			name:     "error message with escapes",
			discover: `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`,
			other:    `{"jsonrpc":"2.0","id":ID,"error":{"code":-32603,"message":"boom\u001b[2J\u001b[Hall is well\u202e","data":{"x":"\u001b]0;t\u0007"}}}`,
			want:     `boom\x1b[2J\x1b[Hall is well\u202e`,
		},
		{
			name:     "a megabyte of error message and data",
			discover: `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`,
			other:    `{"jsonrpc":"2.0","id":ID,"error":{"code":-32603,"message":"` + strings.Repeat("m", 1<<20) + `","data":"` + strings.Repeat("d", 1<<20) + `"}}`,
			want:     "mmm… (1048576 bytes in all)",
		},
		{
			name:     "supportedVersions without ours",
			discover: `{"supportedVersions":` + string(versions) + `,"capabilities":{}}`,
			want:     "1999-01-00007 ... (19992 more, 20000 in all)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.NewDecoder(r.Body).Decode(&req) != nil || req.ID == nil {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				if req.Method == "server/discover" || tt.other == "" {
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, tt.discover)
					return
				}
				io.WriteString(w, strings.Replace(tt.other, "ID", string(req.ID), 1))
			}))
			defer ts.Close()
			code, _, errOut := runCLI(t, "tools", ts.URL)
			if code == exitOK || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want %q in it", code, errOut, tt.want)
			}
			if strings.ContainsAny(errOut, "\x1b\a\u202e") || len(errOut) > 8192 {
				t.Errorf("stderr holds raw escapes or is %d bytes: %.300q", len(errOut), errOut)
			}
		})
	}
}
