package mcp

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// The hand decoders are checked against encoding/json: decodeClientInfo
// against a mirror of Implementation (type plain Implementation, which has
// no methods), and each UnmarshalJSON of client_wire.go against a mirror of
// its wire shape decoded by encoding/json. Where the hand decoder accepts
// an input, encoding/json must accept it too and give the same value.
//
// The hand decoders match member names exactly, as the specification
// spells them; encoding/json also matches them by case folding. An input
// whose object keys fold to a wire name without spelling it is outside
// the comparison (decodeClientInfo hands those to encoding/json itself).

// foldsOnly reports whether an object in raw, at any depth, has a key that
// equals one of names by case folding but not exactly.
func foldsOnly(raw []byte, names []string) bool {
	switch jsonscan.Kind(raw) {
	case '{':
		it, _ := jsonscan.Object(raw)
		var m jsonscan.Member
		for it.Next(&m) {
			var key string
			if err := json.Unmarshal(append(append([]byte{'"'}, m.Key...), '"'), &key); err != nil {
				return true
			}
			for _, n := range names {
				if key != n && strings.EqualFold(key, n) {
					return true
				}
			}
			if foldsOnly(m.Value, names) {
				return true
			}
		}
	case '[':
		var items []json.RawMessage
		json.Unmarshal(raw, &items)
		for _, it := range items {
			if foldsOnly(it, names) {
				return true
			}
		}
	}
	return false
}

// FuzzDecodeClientInfo checks decodeClientInfo against encoding/json into
// a mirror of Implementation.
func FuzzDecodeClientInfo(f *testing.F) {
	for _, s := range []string{
		`{"name":"c","version":"1"}`,
		`{"name":"c","title":"C","version":"1","description":"d","websiteUrl":"https://x","icons":[{"src":"https://x/i.png","mimeType":"image/png","sizes":["48x48"],"theme":"dark"}]}`,
		`{"name":"a","name":null}`, `{"icons":null}`, `{"icons":[{}],"icons":[]}`,
		`{"NAME":"x"}`, `{"n\u0061me":"x"}`, `{"name":"\u00e9\ud83d\ude00"}`, "{\"name\":\"\xff\"}",
		`{"name":1}`, `[]`, `null`, `{"other":{"name":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // decodeClientInfo only sees spans of a validated request
		}
		got := decodeClientInfo(raw)
		type plain Implementation
		var want plain
		if json.Unmarshal(raw, &want) != nil {
			return // malformed: ignored in whole or in part, never a panic
		}
		if d := cmp.Diff(Implementation(want), got, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("decodeClientInfo(%s) differs from encoding/json (-want +got):\n%s", raw, d)
		}
	})
}

// wireMirrors maps each type with a hand-written UnmarshalJSON in
// client_wire.go to its Go fields and the wire members they come from. A
// field of the type that is not here fails TestWireDecodersCoverFields:
// a new field needs its decoder, and a line here.
var wireMirrors = map[reflect.Type]map[string]string{
	reflect.TypeFor[CallToolResult]():     {"Content": "content", "StructuredContent": "structuredContent", "IsError": "isError", "Meta": "_meta"},
	reflect.TypeFor[Tool]():               {"Name": "name", "Title": "title", "Description": "description", "InputSchema": "inputSchema", "OutputSchema": "outputSchema", "Annotations": "annotations", "Icons": "icons", "Meta": "_meta", "TaskSupport": "-", "Scopes": "-"},
	reflect.TypeFor[PromptMessage]():      {"Role": "role", "Content": "content"},
	reflect.TypeFor[GetPromptResult]():    {"Description": "description", "Messages": "messages", "Meta": "_meta"},
	reflect.TypeFor[ResourceContents]():   {"URI": "uri", "MIMEType": "mimeType", "Text": "text", "Blob": "blob", "Meta": "_meta"},
	reflect.TypeFor[ReadResourceResult](): {"Contents": "contents", "CacheTTL": "ttlMs", "CacheScope": "cacheScope", "Meta": "_meta"},
	reflect.TypeFor[CompleteResult]():     {"Values": "completion.values", "Total": "completion.total", "HasMore": "completion.hasMore"},
	reflect.TypeFor[ElicitParams]():       {"Mode": "mode", "Message": "message", "RequestedSchema": "requestedSchema", "URL": "url", "Meta": "_meta"},
	reflect.TypeFor[SamplingMessage]():    {"Role": "role", "Content": "content", "Meta": "_meta"},
	reflect.TypeFor[Implementation]():     {"Name": "name", "Title": "title", "Version": "version", "Description": "description", "Icons": "icons", "WebsiteURL": "websiteUrl"},
}

// wireSamples is one JSON value per wire member that decodes to a
// non-zero field.
var wireSamples = map[string]string{
	"content": `[{"type":"text","text":"x"}]`, "structuredContent": `{"a":1}`, "isError": `true`, "_meta": `{"k":"v"}`,
	"name": `"n"`, "title": `"t"`, "description": `"d"`, "inputSchema": `{"type":"object"}`, "outputSchema": `{"type":"object"}`,
	"annotations": `{"readOnlyHint":true}`, "icons": `[{"src":"https://x/i.png"}]`, "role": `"user"`, "messages": `[{"role":"user","content":{"type":"text","text":"x"}}]`,
	"uri": `"file:///x"`, "mimeType": `"text/plain"`, "text": `"t"`, "blob": `"AA=="`, "contents": `[{"uri":"u","text":"t"}]`, "ttlMs": `1000`,
	"cacheScope": `"private"`, "completion.values": `["a"]`, "completion.total": `3`, "completion.hasMore": `true`, "mode": `"url"`, "message": `"m"`,
	"requestedSchema": `{"type":"object"}`, "url": `"https://x"`, "version": `"1"`, "websiteUrl": `"https://x"`,
}

// TestWireDecodersCoverFields fails when a type with a hand decoder gains
// a field its decoder does not fill: each field of each type must be in
// wireMirrors (or, for types with json tags, agree with its tag), and a
// document holding only its wire member must decode to a non-zero field.
func TestWireDecodersCoverFields(t *testing.T) {
	for typ, fields := range wireMirrors {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			member, ok := fields[f.Name]
			if !ok {
				t.Errorf("%s.%s has no decoder: add it to %s's UnmarshalJSON (or decodeClientInfo) and to wireMirrors", typ.Name(), f.Name, typ.Name())
				continue
			}
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != member {
				t.Errorf("%s.%s: wireMirrors says %q, its json tag %q", typ.Name(), f.Name, member, tag)
			}
			if member == "-" {
				continue
			}
			doc := sampleDoc(typ, member)
			v := reflect.New(typ)
			var err error
			if typ == reflect.TypeFor[Implementation]() {
				*v.Interface().(*Implementation) = decodeClientInfo([]byte(doc))
			} else {
				err = json.Unmarshal([]byte(doc), v.Interface())
			}
			if err != nil {
				t.Errorf("%s from %s: %v", typ.Name(), doc, err)
				continue
			}
			if v.Elem().Field(i).IsZero() {
				t.Errorf("%s.%s stays zero after decoding %s: its decoder does not read %q", typ.Name(), f.Name, doc, member)
			}
		}
	}
	if got, want := slices.Sorted(slices.Values(clientInfoFields[:])), slices.Sorted(mapValues(wireMirrors[reflect.TypeFor[Implementation]()])); !slices.Equal(got, want) {
		t.Errorf("decodeClientInfo reads %v, Implementation has %v", got, want)
	}
}

func mapValues(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// sampleDoc is a document of typ with member set to its sample, and the
// members typ requires.
func sampleDoc(typ reflect.Type, member string) string {
	val, ok := wireSamples[member]
	if !ok {
		panic("no sample for " + member)
	}
	if typ == reflect.TypeFor[PromptMessage]() && member == "content" {
		val = `{"type":"text","text":"x"}` // one content object
	}
	if parent, child, nested := strings.Cut(member, "."); nested {
		return `{"` + parent + `":{"` + child + `":` + val + `}}`
	}
	doc := `{"` + member + `":` + val
	switch typ {
	case reflect.TypeFor[PromptMessage]():
		if member != "content" {
			doc += `,"content":{"type":"text","text":"x"}`
		}
	case reflect.TypeFor[ResourceContents]():
		if member != "text" && member != "blob" {
			doc += `,"text":"t"`
		}
	case reflect.TypeFor[CompleteResult]():
	case reflect.TypeFor[SamplingMessage]():
		if member != "content" {
			doc += `,"content":{"type":"text","text":"x"}`
		}
	}
	return doc + "}"
}

// dupKeys reports whether the object raw repeats a member (encoding/json
// merges repeated objects into maps where the decoders keep the last).
func dupKeys(raw []byte) bool {
	it, ok := jsonscan.Object(raw)
	if !ok {
		return false
	}
	seen := map[string]bool{}
	var m jsonscan.Member
	for it.Next(&m) {
		if seen[string(m.Key)] {
			return true
		}
		seen[string(m.Key)] = true
	}
	return false
}

// contentsOf decodes raw content items as the decoders do, or reports
// false.
func contentsOf(raws []json.RawMessage) ([]Content, bool) {
	var out []Content
	for _, r := range raws {
		c, err := DecodeContent(r)
		if err != nil {
			return nil, false
		}
		out = append(out, c)
	}
	return out, true
}

// rawOrNil is a kept JSON value as the decoders keep it: nil for null.
func rawOrNil(r json.RawMessage) any {
	if k := jsonscan.Kind(r); k == 0 || k == 'n' {
		return nil
	}
	return r
}

// wireNames are the member names of the decoders of client_wire.go.
var wireNames = []string{"content", "structuredContent", "isError", "_meta", "name", "title", "description", "inputSchema",
	"outputSchema", "annotations", "icons", "role", "messages", "uri", "mimeType", "text", "blob", "contents", "ttlMs",
	"cacheScope", "completion", "values", "total", "hasMore", "mode", "message", "requestedSchema", "url", "type", "data", "resource", "size"}

// FuzzClientWireDiff checks each UnmarshalJSON of client_wire.go against
// encoding/json into a mirror of its wire shape: where the decoder accepts
// a document, encoding/json accepts it and gives the same value.
func FuzzClientWireDiff(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1},"isError":true,"_meta":{"k":"v"}}`,
		`{"content":[],"isError":null,"structuredContent":null}`,
		`{"name":"t","inputSchema":{"type":"object"},"outputSchema":true,"icons":[{"src":"s"}]}`,
		`{"role":"user","content":{"type":"image","data":"AA==","mimeType":"i"}}`,
		`{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"x"}}]}`,
		`{"contents":[{"uri":"u","text":"t"},{"uri":"v","blob":"AA=="}],"ttlMs":99999999999999,"cacheScope":"private"}`,
		`{"completion":{"values":["a"],"total":2,"hasMore":true}}`,
		`{"mode":"url","url":"https://x","message":"m","requestedSchema":null}`,
		`{"role":"assistant","content":[{"type":"text","text":"x"}],"_meta":{}}`,
		`{"isError":1}`, `{"CONTENT":[]}`, `{"content":[{"type":"text","text":"\u00e9"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) || dupKeys(raw) || foldsOnly(raw, wireNames) {
			return
		}
		eq := func(name string, want, got any) {
			t.Helper()
			if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("%s from %s differs from encoding/json (-want +got):\n%s", name, raw, d)
			}
		}
		mustMirror := func(name string, err error) bool {
			t.Helper()
			if err != nil {
				t.Fatalf("%s accepted %s, encoding/json rejects it: %v", name, raw, err)
			}
			return true
		}

		var r CallToolResult
		if json.Unmarshal(raw, &r) == nil {
			var w struct {
				Content           []json.RawMessage `json:"content"`
				StructuredContent json.RawMessage   `json:"structuredContent"`
				IsError           bool              `json:"isError"`
				Meta              Meta              `json:"_meta"`
			}
			mustMirror("CallToolResult", json.Unmarshal(raw, &w))
			content, ok := contentsOf(w.Content)
			if !ok {
				t.Fatalf("CallToolResult accepted %s with content DecodeContent rejects", raw)
			}
			eq("CallToolResult", CallToolResult{Content: content, StructuredContent: rawOrNil(w.StructuredContent), IsError: w.IsError, Meta: w.Meta}, r)
		}

		var tool Tool
		if json.Unmarshal(raw, &tool) == nil {
			type plain Tool
			var w struct {
				plain
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			}
			mustMirror("Tool", json.Unmarshal(raw, &w))
			want := Tool(w.plain)
			want.InputSchema, want.OutputSchema = nil, nil
			if len(w.InputSchema) > 0 {
				want.InputSchema = w.InputSchema
			}
			if len(w.OutputSchema) > 0 {
				want.OutputSchema = w.OutputSchema
			}
			eq("Tool", want, tool)
		}

		var pm PromptMessage
		if json.Unmarshal(raw, &pm) == nil {
			var w struct {
				Role    Role            `json:"role"`
				Content json.RawMessage `json:"content"`
			}
			mustMirror("PromptMessage", json.Unmarshal(raw, &w))
			c, ok := contentsOf([]json.RawMessage{w.Content})
			if !ok {
				t.Fatalf("PromptMessage accepted %s with content DecodeContent rejects", raw)
			}
			eq("PromptMessage", PromptMessage{Role: w.Role, Content: c[0]}, pm)
		}

		var gp GetPromptResult
		if json.Unmarshal(raw, &gp) == nil {
			var w struct {
				Description string `json:"description"`
				Messages    []struct {
					Role    Role            `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
				Meta Meta `json:"_meta"`
			}
			mustMirror("GetPromptResult", json.Unmarshal(raw, &w))
			want := GetPromptResult{Description: w.Description, Meta: w.Meta}
			for _, m := range w.Messages {
				c, ok := contentsOf([]json.RawMessage{m.Content})
				if !ok {
					t.Fatalf("GetPromptResult accepted %s with content DecodeContent rejects", raw)
				}
				want.Messages = append(want.Messages, PromptMessage{Role: m.Role, Content: c[0]})
			}
			eq("GetPromptResult", want, gp)
		}

		var rr ReadResourceResult
		if json.Unmarshal(raw, &rr) == nil {
			type contents struct {
				URI      string  `json:"uri"`
				MIMEType string  `json:"mimeType"`
				Text     *string `json:"text"`
				Blob     *[]byte `json:"blob"`
				Meta     Meta    `json:"_meta"`
			}
			var w struct {
				Contents   []*contents `json:"contents"`
				TTLMs      *int64      `json:"ttlMs"`
				CacheScope CacheScope  `json:"cacheScope"`
				Meta       Meta        `json:"_meta"`
			}
			mustMirror("ReadResourceResult", json.Unmarshal(raw, &w))
			want := ReadResourceResult{CacheScope: w.CacheScope, Meta: w.Meta}
			if w.TTLMs != nil && *w.TTLMs > 0 {
				want.CacheTTL = msDuration(*w.TTLMs)
			}
			for _, c := range w.Contents {
				rc := &ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Meta: c.Meta}
				switch {
				case c.Blob != nil:
					rc.Blob = append([]byte{}, *c.Blob...)
				case c.Text != nil:
					rc.Text = *c.Text
				}
				want.Contents = append(want.Contents, rc)
			}
			eq("ReadResourceResult", want, rr)
		}

		var cr CompleteResult
		if json.Unmarshal(raw, &cr) == nil {
			type plain CompleteResult
			var w struct {
				Completion struct {
					Values  []string `json:"values"`
					Total   int      `json:"total"`
					HasMore bool     `json:"hasMore"`
				} `json:"completion"`
			}
			mustMirror("CompleteResult", json.Unmarshal(raw, &w))
			eq("CompleteResult", CompleteResult(plain{Values: w.Completion.Values, Total: w.Completion.Total, HasMore: w.Completion.HasMore}), cr)
		}

		var ep ElicitParams
		if json.Unmarshal(raw, &ep) == nil {
			var w struct {
				Mode            ElicitMode      `json:"mode"`
				Message         string          `json:"message"`
				RequestedSchema json.RawMessage `json:"requestedSchema"`
				URL             string          `json:"url"`
				Meta            Meta            `json:"_meta"`
			}
			mustMirror("ElicitParams", json.Unmarshal(raw, &w))
			want := ElicitParams{Mode: w.Mode, Message: w.Message, URL: w.URL, Meta: w.Meta, RequestedSchema: rawOrNil(w.RequestedSchema)}
			if want.RequestedSchema == nil {
				ep.RequestedSchema = rawOrNil(nil)
			}
			if want.Mode == "" {
				want.Mode = ElicitModeForm
			}
			eq("ElicitParams", want, ep)
		}

		var sm SamplingMessage
		if json.Unmarshal(raw, &sm) == nil {
			var w struct {
				Role    Role            `json:"role"`
				Content json.RawMessage `json:"content"`
				Meta    Meta            `json:"_meta"`
			}
			mustMirror("SamplingMessage", json.Unmarshal(raw, &w))
			items := []json.RawMessage{w.Content}
			if jsonscan.Kind(w.Content) == '[' {
				items = nil
				json.Unmarshal(w.Content, &items)
			}
			c, ok := contentsOf(items)
			if !ok {
				t.Fatalf("SamplingMessage accepted %s with content DecodeContent rejects", raw)
			}
			eq("SamplingMessage", SamplingMessage{Role: w.Role, Content: c, Meta: w.Meta}, sm)
		}
	})
}
