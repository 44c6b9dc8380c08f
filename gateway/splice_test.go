package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// logRecorder keeps the messages and name attributes logged.
type logRecorder struct {
	mu   sync.Mutex
	logs []string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecorder) WithGroup(string) slog.Handler            { return r }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	line := rec.Message
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "name" || a.Key == "uri" {
			line += " " + a.Key + "=" + a.Value.String()
		}
		return true
	})
	r.mu.Lock()
	r.logs = append(r.logs, line)
	r.mu.Unlock()
	return nil
}

// spliceRouter is a router of one backend "a" that denies the tool
// "deny", logging to a recorder.
func spliceRouter() (*router, *backend, *logRecorder) {
	rec := &logRecorder{}
	b := &backend{name: "a", deny: set([]string{"deny"})}
	return &router{log: slog.New(rec), backends: []*backend{b}, named: map[string]*backend{"a": b}}, b, rec
}

// TestRenameSplice checks list items renamed in place: the name member
// rewritten and every other byte kept, and the items that are decoded
// instead (repeated or escaped keys, invalid UTF-8) or refused.
func TestRenameSplice(t *testing.T) {
	many := `{"name":"t"` + strings.Repeat(`,"k":1`, maxSpliceKeys) + `}`
	tests := []struct {
		name, raw, want, err string
		k                    kind
		logs                 []string
	}{
		{name: "in place", raw: `[{"name":"t","inputSchema":{"name":"inner","type":"object"}},{ "description" : "a<b" , "name" : "u" }]`,
			want: `[{"name":"a_t","inputSchema":{"name":"inner","type":"object"}},{ "description" : "a<b" , "name" : "a_u" }]`},
		{name: "escaped name value", raw: `[{"name":"\u0074"}]`, want: `[{"name":"a_t"}]`},
		{name: "repeated key: decoded, the last wins", raw: `[{"name":"bad name","name":"t","x":1}]`, want: `[{"name":"a_t","x":1}]`},
		{name: "escaped key: decoded", raw: `[{"n\u0061me":"t","x":"<"}]`, want: `[{"name":"a_t","x":"\u003c"}]`},
		{name: "escaped key spelling another", raw: `[{"name":"t","\u006e\u0061\u006d\u0065":"u"}]`, want: `[{"name":"a_u"}]`},
		{name: "many keys: decoded", raw: `[` + many + `]`, want: `[{"k":1,"name":"a_t"}]`},
		{name: "left out", raw: `[{"name":"deny"},{"name":"x y"},{"nope":1},{"name":7},null,{"name":""},{"name":"ok"}]`, want: `[{"name":"a_ok"}]`,
			logs: []string{`gateway: an item is left out name=x y`, `gateway: an item without a name is left out`, `gateway: an item without a name is left out`, `gateway: an item without a name is left out`, `gateway: an item without a name is left out`}},
		{name: "null list", raw: `null`, want: `[]`},
		{name: "empty list", raw: ` [ ] `, want: `[]`},
		{name: "invalid UTF-8: decoded", raw: "[{\"name\":\"t\",\"d\":\"\xff\"}]", want: "[{\"d\":\"\xff\",\"name\":\"a_t\"}]"}, // as encoding/json passes it
		{name: "not a list", raw: `{"name":"t"}`, err: "tools: not an array"},
		{name: "an item not an object", raw: `[{"name":"t"},1]`, err: "tools: an item is not an object"},
		{name: "not JSON", raw: `[{"name":"t"}`, err: "tools: unexpected end of JSON input"},
		{name: "resources as they are", k: kindResource, raw: `[{"uri":"x://1", "name":"n"},{"uri":""},{"name":"no uri"}]`, want: `[{"uri":"x://1", "name":"n"}]`},
		{name: "templates as they are", k: kindTemplate, raw: `[{"uriTemplate":"x://{id}"},{"uriTemplate":7}]`, want: `[{"uriTemplate":"x://{id}"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, b, rec := spliceRouter()
			member := map[kind]string{kindTool: "tools", kindResource: "resources", kindTemplate: "resourceTemplates"}[tt.k]
			out, n, err := g.appendRenamed(b, member, tt.k, []byte(tt.raw), nil, false, []byte("["), false, false)
			if tt.err != "" {
				if err == nil || err.Error() != strings.Replace(tt.err, "tools", member, 1) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(append(out, ']')); got != tt.want {
				t.Errorf("renamed = %s, want %s", got, tt.want)
			}
			if want := len(splitArray([]byte(tt.want))); n != want {
				t.Errorf("count = %d, want %d", n, want)
			}
			if d := cmp.Diff(tt.logs, rec.logs); d != "" {
				t.Errorf("logs (-want +got):\n%s", d)
			}
		})
	}
}

// FuzzRenameSplice checks the in-place renaming of list items against the
// decode path (each item decoded into a map and encoded again, as the
// gateway did before): the same error or none, items that decode to the
// same values in the same order, valid JSON, the same log lines and the
// same resources recorded for routing.
func FuzzRenameSplice(f *testing.F) {
	for _, s := range []string{
		`[{"name":"ok","inputSchema":{"type":"object","name":"x"}},{"name":"bad name"},{"nope":1}]`,
		`[{"name":"x","name":"y"}]`,
		`[{"n\u0061me":"x"},{"name":"\u0041"}]`,
		`[{"name":"deny"},{"name":"` + strings.Repeat("z", 70) + `"}]`,
		`null`, `[]`, `[null,{"name":"t"}]`, `[1]`, `{"name":"t"}`,
		`[{"uri":"x://a","uriTemplate":"x://{a}","name":"t"}]`,
		"[{\"name\":\"t\",\"d\":\"\xff<\u2028\"}]",
	} {
		for k := range 4 {
			f.Add([]byte(s), uint8(k))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, kb uint8) {
		k := kind(kb % 4)
		member := []string{"tools", "prompts", "resources", "resourceTemplates"}[k]
		g1, b1, rec1 := spliceRouter()
		g2, b2, rec2 := spliceRouter()
		got, n, err := g1.appendRenamed(b1, member, k, raw, nil, false, []byte("["), false, false)
		want, wn, _, werr := g2.appendDecoded(b2, member, k, raw, nil, false, []byte("["), false, nil)
		if (err == nil) != (werr == nil) {
			t.Fatalf("appendRenamed(%q): err %v; the decode path: %v", raw, err, werr)
		}
		if err != nil {
			return
		}
		got, want = append(got, ']'), append(want, ']')
		if !json.Valid(got) {
			t.Fatalf("appendRenamed(%q) = %q, not JSON", raw, got)
		}
		var gv, wv []any
		if err := json.Unmarshal(got, &gv); err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(want, &wv)
		if d := cmp.Diff(wv, gv); d != "" || n != wn || n != len(gv) {
			t.Fatalf("appendRenamed(%q) = %d items %s, the decode path %d items %s:\n%s", raw, n, got, wn, want, d)
		}
		if d := cmp.Diff(rec2.logs, rec1.logs); d != "" {
			t.Fatalf("appendRenamed(%q) logs (-decode path +splice):\n%s", raw, d)
		}
		if d := cmp.Diff(fmt.Sprint(g2.res.uris == nil, len(g2.res.uris), len(g2.res.templates)), fmt.Sprint(g1.res.uris == nil, len(g1.res.uris), len(g1.res.templates))); d != "" {
			t.Fatalf("appendRenamed(%q) recorded resources (-decode path +splice):\n%s", raw, d)
		}
	})
}
