package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/internal/wire"
)

// ParamHeaders returns the Mcp-Param-* headers that a tools/call must carry
// for a tool with the given input schema: every property annotated with
// x-mcp-header, reached from the root through "properties" only, whose
// value is present (and not null) in args. Strings go as they are,
// integers in decimal, booleans as true/false, each encoded with
// EncodeHeaderValue. An annotation the specification forbids is an error.
func ParamHeaders(schema, args json.RawMessage) (http.Header, error) {
	h := http.Header{}
	if len(schema) == 0 {
		return h, nil
	}
	var argObj map[string]json.RawMessage
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &argObj); err != nil {
			return nil, fmt.Errorf("arguments must be an object: %w", err)
		}
	}
	seen := map[string]bool{}
	if err := walkParamHeaders(schema, argObj, nil, h, seen); err != nil {
		return nil, err
	}
	return h, nil
}

type schemaNode struct {
	Type       json.RawMessage            `json:"type"`
	Properties map[string]json.RawMessage `json:"properties"`
	Header     *string                    `json:"x-mcp-header"`
}

func walkParamHeaders(schema json.RawMessage, args map[string]json.RawMessage, path []string, h http.Header, seen map[string]bool) error {
	var n schemaNode
	if err := json.Unmarshal(schema, &n); err != nil {
		return nil // a boolean schema or other shape: no annotations reachable
	}
	for name, sub := range n.Properties {
		var p schemaNode
		if json.Unmarshal(sub, &p) != nil {
			continue
		}
		ppath := append(append([]string(nil), path...), name)
		if p.Header != nil {
			hn := *p.Header
			if hn == "" || !wire.IsToken(hn) {
				return fmt.Errorf("property %q: x-mcp-header %q is not an HTTP token", strings.Join(ppath, "."), hn)
			}
			key := strings.ToLower(hn)
			if seen[key] {
				return fmt.Errorf("x-mcp-header %q appears twice", hn)
			}
			seen[key] = true
			if v, ok := args[name]; ok && string(bytes.TrimSpace(v)) != "null" {
				s, err := headerText(v)
				if err != nil {
					return fmt.Errorf("property %q: %w", strings.Join(ppath, "."), err)
				}
				h.Set(protocol.HeaderParamPrefix+hn, EncodeHeaderValue(s))
			}
		}
		if len(p.Properties) > 0 {
			var nested map[string]json.RawMessage
			if v, ok := args[name]; ok {
				json.Unmarshal(v, &nested)
			}
			if err := walkParamHeaders(sub, nested, ppath, h, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// headerText converts a primitive JSON value to its header text.
func headerText(v json.RawMessage) (string, error) {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0:
		return "", fmt.Errorf("empty value")
	case v[0] == '"':
		var s string
		err := json.Unmarshal(v, &s)
		return s, err
	case string(v) == "true" || string(v) == "false":
		return string(v), nil
	case v[0] == '-' || (v[0] >= '0' && v[0] <= '9'):
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return strconv.FormatInt(n, 10), nil
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || f != float64(int64(f)) {
			return "", fmt.Errorf("value %s is not an integer", v)
		}
		return strconv.FormatInt(int64(f), 10), nil
	}
	return "", fmt.Errorf("value %s is not a string, integer or boolean", truncate(string(v), 40))
}
