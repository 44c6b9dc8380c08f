package mcp

import (
	"slices"
	"strings"
)

// capabilityNames lists the client capabilities c declares, as a person would name them:
// "elicitation (url)", "sampling (tools)", "roots", "extension io.modelcontextprotocol/tasks".
func capabilityNames(c ClientCapabilities) []string {
	var names []string
	if e := c.Elicitation; e != nil {
		var modes []string
		if e.Form != nil {
			modes = append(modes, "form")
		}
		if e.URL != nil {
			modes = append(modes, "url")
		}
		names = append(names, withParts("elicitation", modes))
	}
	if s := c.Sampling; s != nil {
		var parts []string
		if s.Context != nil {
			parts = append(parts, "context")
		}
		if s.Tools != nil {
			parts = append(parts, "tools")
		}
		names = append(names, withParts("sampling", parts))
	}
	if c.Roots != nil {
		names = append(names, "roots")
	}
	for _, k := range sortedKeys(c.Extensions) {
		names = append(names, "extension "+k)
	}
	for _, k := range sortedKeys(c.Experimental) {
		names = append(names, "experimental "+k)
	}
	return names
}

func withParts(name string, parts []string) string {
	if len(parts) == 0 {
		return name
	}
	return name + " (" + strings.Join(parts, ", ") + ")"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// missingCapabilityMessage is the message of a -32021 error for required: it names what the
// client must declare, so that a person reading a log knows what to change.
func missingCapabilityMessage(required ClientCapabilities) string {
	names := capabilityNames(required)
	if len(names) == 0 {
		return "Missing required client capability"
	}
	return "Missing required client capability: " + strings.Join(names, ", ") +
		" (declare it in the request's clientCapabilities)"
}
