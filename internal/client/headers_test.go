package client

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The examples of the specification's "Value Encoding" table.
func TestEncodeHeaderValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"us-west1", "us-west1"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"", ""},
		{"a\tb", "a\tb"},
	}
	for _, tt := range tests {
		if got := EncodeHeaderValue(tt.in); got != tt.want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParamHeaders(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"count":{"type":"integer","x-mcp-header":"Count"},
		"dry":{"type":"boolean","x-mcp-header":"Dry"},
		"query":{"type":"string"},
		"opts":{"type":"object","properties":{"tenant":{"type":"string","x-mcp-header":"Tenant"}}},
		"list":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string","x-mcp-header":"X"}}}}
	}}`)
	tests := []struct {
		name    string
		args    string
		want    http.Header
		wantErr bool
	}{
		{"all present", `{"region":"us-west1","count":42,"dry":false,"query":"q","opts":{"tenant":"Zoë"}}`, http.Header{
			"Mcp-Param-Region": {"us-west1"},
			"Mcp-Param-Count":  {"42"},
			"Mcp-Param-Dry":    {"false"},
			"Mcp-Param-Tenant": {"=?base64?Wm/Dqw==?="},
		}, false},
		{"absent and null values send no header", `{"region":null}`, http.Header{}, false},
		{"no arguments", ``, http.Header{}, false},
		{"integral float", `{"count":42.0}`, http.Header{"Mcp-Param-Count": {"42"}}, false},
		{"not under items", `{"list":[{"x":"y"}]}`, http.Header{}, false},
		{"object value", `{"region":{"a":1}}`, nil, true},
		{"fraction", `{"count":1.5}`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParamHeaders(schema, json.RawMessage(tt.args))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParamHeadersRejectsBadAnnotations(t *testing.T) {
	for _, schema := range []string{
		`{"properties":{"a":{"type":"string","x-mcp-header":"Bad Name"}}}`,
		`{"properties":{"a":{"type":"string","x-mcp-header":""}}}`,
		`{"properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`,
	} {
		if _, err := ParamHeaders(json.RawMessage(schema), json.RawMessage(`{}`)); err == nil {
			t.Errorf("ParamHeaders(%s) = nil error, want one", schema)
		}
	}
}
