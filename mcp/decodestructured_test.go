package mcp_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/mcp"
)

func TestDecodeStructured(t *testing.T) {
	type weather struct {
		City  string  `json:"city"`
		TempC float64 `json:"tempC"`
	}
	tests := []struct {
		name    string
		r       *mcp.CallToolResult
		want    weather
		wantErr string
		noSC    bool
	}{
		{name: "raw JSON, as the client fills it", r: &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"city":"Oslo","tempC":-3.5}`)}, want: weather{"Oslo", -3.5}},
		{name: "a Go value, as a handler sets it", r: &mcp.CallToolResult{StructuredContent: map[string]any{"city": "Lima", "tempC": 19}}, want: weather{"Lima", 19}},
		{name: "a struct", r: &mcp.CallToolResult{StructuredContent: weather{"Rome", 21}}, want: weather{"Rome", 21}},
		{name: "none", r: &mcp.CallToolResult{}, noSC: true},
		{name: "nil result", r: nil, noSC: true},
		{name: "empty raw", r: &mcp.CallToolResult{StructuredContent: json.RawMessage(nil)}, noSC: true},
		{name: "null", r: &mcp.CallToolResult{StructuredContent: json.RawMessage(`null`)}, noSC: true},
		{name: "wrong shape", r: &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"city":42}`)}, wantErr: "decoding structuredContent into *mcp_test.weather"},
		{name: "not encodable", r: &mcp.CallToolResult{StructuredContent: func() {}}, wantErr: "encoding structuredContent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got weather
			err := tt.r.DecodeStructured(&got)
			switch {
			case tt.noSC:
				if !errors.Is(err, mcp.ErrNoStructuredContent) {
					t.Fatalf("DecodeStructured = %v, want ErrNoStructuredContent", err)
				}
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeStructured = %v, want an error containing %q", err, tt.wantErr)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("DecodeStructured (-want +got):\n%s", diff)
				}
			}
		})
	}
}
