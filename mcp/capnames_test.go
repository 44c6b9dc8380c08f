package mcp

import (
	"encoding/json"
	"testing"
)

func TestMissingCapabilityMessage(t *testing.T) {
	tests := []struct {
		required ClientCapabilities
		want     string
	}{
		{ClientCapabilities{Sampling: &SamplingCapability{}}, "Missing required client capability: sampling (declare it in the request's clientCapabilities)"},
		{ClientCapabilities{Elicitation: &ElicitationCapability{URL: json.RawMessage(`{}`)}}, "Missing required client capability: elicitation (url) (declare it in the request's clientCapabilities)"},
		{ClientCapabilities{Roots: &RootsCapability{}, Sampling: &SamplingCapability{Tools: json.RawMessage(`{}`)}}, "Missing required client capability: sampling (tools), roots (declare it in the request's clientCapabilities)"},
		{ClientCapabilities{Extensions: map[string]json.RawMessage{"io.modelcontextprotocol/tasks": json.RawMessage(`{}`)}}, "Missing required client capability: extension io.modelcontextprotocol/tasks (declare it in the request's clientCapabilities)"},
		{ClientCapabilities{}, "Missing required client capability"},
	}
	for _, tt := range tests {
		if got := MissingCapability(tt.required).Message; got != tt.want {
			t.Errorf("MissingCapability(%+v).Message = %q, want %q", tt.required, got, tt.want)
		}
	}
}
