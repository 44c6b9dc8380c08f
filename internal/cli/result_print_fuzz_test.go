package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzPrintResults feeds whatever a server might send to the printers and
// the form parser: they must never panic, and a result they accept prints
// something for every content item.
func FuzzPrintResults(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"},{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
		`{"content":[],"structuredContent":{"a":1},"isError":true}`,
		`{"content":[{"type":"resource","resource":{"uri":"x://y","text":"t"}}]}`,
		`{"contents":[{"uri":"a","text":"x"},{"uri":"b","blob":"AA=="}]}`,
		`{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hello"}}]}`,
		`{"tools":[{"name":"a"}]}`,
		`{"type":"object","properties":{"a":{"type":"string","enum":["x"]}},"required":["a"]}`,
		`{"content":[{"type":"text"}]}`, `null`, `[]`, `{"content":{}}`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b bytes.Buffer
		raw := json.RawMessage(data)
		if _, err := printCallResult(&b, raw); err == nil {
			var r callResult
			json.Unmarshal(raw, &r)
			if len(r.Content) > 0 && b.Len() == 0 {
				t.Errorf("%s: %d content items printed nothing", data, len(r.Content))
			}
		}
		printReadResult(&b, raw)
		printPromptResult(&b, raw)
		printList(&b, "tools", []json.RawMessage{raw})
		printList(&b, "prompts", []json.RawMessage{raw})
		isToolError(raw)
		if _, err := parseForm(raw); err == nil {
			// Empty answers: the form ends (required fields run out of
			// attempts, which cancels).
			newFormAsker(strings.NewReader(strings.Repeat("\n", 50)), &b).askForm("m", raw)
		}
	})
}
