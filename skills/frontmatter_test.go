package skills_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/skills"
)

func TestParseFrontmatter(t *testing.T) {
	tests := []struct {
		name, in, want, body string
	}{
		{"plain", "---\nname: a\ndescription: b\n---\nbody\n", `{"name":"a","description":"b"}`, "body\n"},
		{"CRLF", "---\r\nname: a\r\ndescription: b\r\n---\r\nbody", `{"name":"a","description":"b"}`, "body"},
		{"byte order mark", "\xef\xbb\xbf---\nname: a\n---\n", `{"name":"a"}`, ""},
		{"closing line with spaces, no body", "---\nname: a\n--- \t", `{"name":"a"}`, ""},
		{"dashes inside a value", "---\nname: a\nnote: |\n  ---x\n---\n", `{"name":"a","note":"---x"}`, ""},
		{"key order kept", "---\nz: 1\na: 2\nm: 3\n---\n", `{"z":1,"a":2,"m":3}`, ""},
		{"scalars", "---\nt: true\nf: false\nn: null\ntilde: ~\ni: 42\nneg: -7\nhex: 0x1F\nfl: 1.5\nexp: 1e3\nyes: yes\ndate: 2024-01-02\nq: \"42\"\nver: 1.0.0\n---\n",
			`{"t":true,"f":false,"n":null,"tilde":null,"i":42,"neg":-7,"hex":31,"fl":1.5,"exp":1000,"yes":"yes","date":"2024-01-02","q":"42","ver":"1.0.0"}`, ""},
		{"nested", "---\nmetadata:\n  author: x\n  tags: [a, b]\nallowed-tools:\n  - Bash(git:*)\n  - Read\n---\n",
			`{"metadata":{"author":"x","tags":["a","b"]},"allowed-tools":["Bash(git:*)","Read"]}`, ""},
		{"anchors and merge keys", "---\nbase: &b {x: 1, y: 2}\nmore:\n  <<: *b\n  y: 3\nref: *b\n---\n",
			`{"base":{"x":1,"y":2},"more":{"y":3,"x":1},"ref":{"x":1,"y":2}}`, ""},
		{"merge of a sequence", "---\na: &a {x: 1}\nb: &b {x: 2, y: 2}\nc:\n  <<: [*a, *b]\n---\n", `{"a":{"x":1},"b":{"x":2,"y":2},"c":{"x":1,"y":2}}`, ""},
		{"non-string keys", "---\n1: one\ntrue: yes\n---\n", `{"1":"one","true":"yes"}`, ""},
		{"HTML characters", "---\nd: <a & b>\n---\n", `{"d":"\u003ca \u0026 b\u003e"}`, ""},
		{"comments", "---\n# a comment\nname: a # trailing\n---\n", `{"name":"a"}`, ""},
		{"empty mapping", "---\n{}\n---\n", `{}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, body, err := skills.ParseFrontmatter([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(fm) != tt.want || string(body) != tt.body {
				t.Errorf("got %s, body %q; want %s, body %q", fm, body, tt.want, tt.body)
			}
		})
	}
}

func TestParseFrontmatterErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     error
	}{
		{"no opening line", "name: a\n---\n", skills.ErrNoFrontmatter},
		{"opening line with text", "--- x\nname: a\n---\n", skills.ErrNoFrontmatter},
		{"not closed", "---\nname: a\n", skills.ErrNoFrontmatter},
		{"closing line with text", "---\nname: a\n---x\n", skills.ErrNoFrontmatter},
		{"no blank line between the delimiters", "---\n---\n", skills.ErrNoFrontmatter},
		{"empty block", "---\n\n---\n", skills.ErrMalformedFrontmatter},
		{"sequence", "---\n[1]\n---\n", skills.ErrMalformedFrontmatter},
		{"syntax", "---\na: b: c\n---\n", skills.ErrMalformedFrontmatter},
		{"tab indentation", "---\na:\n\t- b\n---\n", skills.ErrMalformedFrontmatter},
		{"repeated key", "---\na: 1\na: 2\n---\n", skills.ErrMalformedFrontmatter},
		{"mapping key", "---\n? {a: 1}\n: x\n---\n", skills.ErrMalformedFrontmatter},
		{"NaN", "---\na: .nan\n---\n", skills.ErrMalformedFrontmatter},
		{"bad merge", "---\na:\n  <<: 1\n---\n", skills.ErrMalformedFrontmatter},
		{"too deep", "---\na: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n---\n", skills.ErrMalformedFrontmatter},
		{"too long", "---\na: \"" + strings.Repeat("x", skills.MaxFrontmatterBytes) + "\"\n---\n", skills.ErrMalformedFrontmatter},
		{"alias bomb", "---\n" + aliasBomb() + "---\n", skills.ErrMalformedFrontmatter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, _, err := skills.ParseFrontmatter([]byte(tt.in))
			if !errors.Is(err, tt.want) {
				t.Errorf("got %s, %v; want %v", fm, err, tt.want)
			}
		})
	}
}

// aliasBomb is a "billion laughs" document: nine levels of ten aliases
// each.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func FuzzParseFrontmatter(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: b\n---\nbody\n",
		"---\r\nname: a\r\n---\r\n",
		"---\nbase: &b {x: 1}\nmore: {<<: *b, y: [1, 2.5, null, true]}\n---\n",
		"---\n? [a]\n: b\n---\n",
		"---\n" + aliasBomb() + "---\n",
		"---\na: !!binary aGVsbG8=\nb: !custom x\n---\n",
		"\xef\xbb\xbf---\n--- \n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, body, err := skills.ParseFrontmatter(data)
		if err != nil {
			if !errors.Is(err, skills.ErrNoFrontmatter) && !errors.Is(err, skills.ErrMalformedFrontmatter) {
				t.Fatalf("error %v wraps neither reason", err)
			}
			return
		}
		var m map[string]any
		if err := json.Unmarshal(fm, &m); err != nil {
			t.Fatalf("frontmatter %q is not a JSON object: %v", fm, err)
		}
		if len(body) > len(data) {
			t.Fatalf("body longer than the input")
		}
		// The same input always gives the same output.
		again, _, err := skills.ParseFrontmatter(data)
		if err != nil || string(again) != string(fm) {
			t.Fatalf("second parse: %s, %v; first %s", again, err, fm)
		}
	})
}
