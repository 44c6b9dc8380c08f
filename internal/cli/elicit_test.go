package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testFormSchema = `{"type":"object","properties":{
	"name":{"type":"string","title":"Your name","minLength":2},
	"age":{"type":"integer","minimum":0,"maximum":150,"default":30},
	"color":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]},
	"tags":{"type":"array","items":{"enum":["a","b","c"]}},
	"subscribe":{"type":"boolean"},
	"note":{"type":"string"}
},"required":["name","color"]}`

// TestAskForm answers a form as a user would and checks the ElicitResult
// it becomes: one question per property, in schema order, with retries
// for answers that do not fit.
func TestAskForm(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		action  string
		content map[string]any
		prompts []string // parts of what the user saw
	}{
		{
			name: "accept",
			// name too short then ok; age default; color by number; tags by
			// value and number; subscribe yes; note empty (left out); send.
			input:   "A\nAda\n\n2\nc,1\ny\n\n\n",
			action:  actionAccept,
			content: map[string]any{"name": "Ada", "age": float64(30), "color": "g", "tags": []any{"a", "c"}, "subscribe": true},
			prompts: []string{"The server asks: Who are you?", "Your name (name) (string, required): ", "the length must be between 2", "age (integer) [30]: ", "  2) Green (g)", "Send this answer?"},
		},
		{
			name:    "required field left empty is asked again",
			input:   "\nBob\n151\n7\nr\n\nno\n\n\n",
			action:  actionAccept,
			content: map[string]any{"name": "Bob", "age": float64(7), "color": "r", "subscribe": false},
			prompts: []string{"name is required.", "the largest allowed is 150"},
		},
		{name: "decline", input: "Ada\n\n1\n\n\n\nn\n", action: actionDecline},
		{name: "cancel", input: "Ada\n\n1\n\n\n\nc\n", action: actionCancel},
		{name: "input closed", input: "Ada\n", action: actionCancel},
		{name: "never a fitting answer", input: strings.Repeat("x\n", 10), action: actionCancel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			a := newFormAsker(strings.NewReader(tt.input), &out)
			action, content, err := a.askForm("Who are you?", json.RawMessage(testFormSchema))
			if err != nil {
				t.Fatal(err)
			}
			// Compare as JSON sees it: that is what the server gets.
			var got map[string]any
			if content != nil {
				b, _ := json.Marshal(content)
				json.Unmarshal(b, &got)
			}
			if action != tt.action || !cmp.Equal(tt.content, got) {
				t.Errorf("got %s %v, want %s %v\n%s", action, got, tt.action, tt.content, out.String())
			}
			for _, p := range tt.prompts {
				if !strings.Contains(out.String(), p) {
					t.Errorf("the user did not see %q:\n%s", p, out.String())
				}
			}
		})
	}
}

func TestAskFormRefusesSchemas(t *testing.T) {
	for _, schema := range []string{
		`[]`,
		`{"type":"object","properties":{"x":{"type":"object"}}}`,
		`{"type":"object","properties":{"x":{"type":"array"}}}`,
		`{"type":"object","properties":[1]}`,
	} {
		a := newFormAsker(strings.NewReader("\n"), &bytes.Buffer{})
		if _, _, err := a.askForm("m", json.RawMessage(schema)); err == nil {
			t.Errorf("%s: no error", schema)
		}
	}
}

func TestAskURL(t *testing.T) {
	for input, want := range map[string]string{"\n": actionAccept, "n\n": actionDecline, "c\n": actionCancel, "": actionCancel} {
		var out bytes.Buffer
		got := newFormAsker(strings.NewReader(input), &out).askURL("Sign in.", "https://example.com/auth")
		if got != want || !strings.Contains(out.String(), "https://example.com/auth") {
			t.Errorf("%q: %s, want %s\n%s", input, got, want, out.String())
		}
	}
}
