package client

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// checkHeaderDecls checks a tool's x-mcp-header annotations against the
// constraints of the Streamable HTTP transport: a non-empty HTTP token
// name, unique ignoring case, on a string, integer or boolean property
// reachable from the root through "properties" only.
func checkHeaderDecls(schema json.RawMessage) error {
	if len(schema) == 0 {
		return nil
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return fmt.Errorf("inputSchema is not JSON: %v", err)
	}
	seen := map[string]bool{}
	return walkSchema(root, true, "", seen, 0)
}

// maxSchemaDepth bounds the walk over a hostile schema.
const maxSchemaDepth = 64

// dataKeywords hold instance values, not schemas: an x-mcp-header member
// inside them is data.
var dataKeywords = map[string]bool{"default": true, "const": true, "enum": true, "examples": true}

func walkSchema(node any, static bool, path string, seen map[string]bool, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("inputSchema nests deeper than %d levels", maxSchemaDepth)
	}
	obj, ok := node.(map[string]any)
	if !ok {
		if arr, ok := node.([]any); ok {
			for _, v := range arr {
				if err := walkSchema(v, false, path, seen, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if h, ok := obj["x-mcp-header"]; ok {
		if !static {
			return fmt.Errorf("x-mcp-header at %q is not reachable through properties alone", path)
		}
		if path == "" {
			return fmt.Errorf("x-mcp-header on the schema root")
		}
		name, ok := h.(string)
		if !ok {
			return fmt.Errorf("property %q: x-mcp-header is not a string", path)
		}
		if !wire.IsToken(name) {
			return fmt.Errorf("property %q: x-mcp-header %q is not an HTTP token", path, name)
		}
		key := strings.ToLower(name)
		if seen[key] {
			return fmt.Errorf("x-mcp-header %q appears twice (ignoring case)", name)
		}
		seen[key] = true
		switch t, _ := obj["type"].(string); t {
		case "string", "integer", "boolean":
		default:
			return fmt.Errorf("property %q: x-mcp-header on a property of type %v (only string, integer and boolean are allowed)", path, obj["type"])
		}
	}
	for k, v := range obj {
		if dataKeywords[k] {
			continue
		}
		if k == "properties" {
			if props, ok := v.(map[string]any); ok {
				for name, sub := range props {
					p := name
					if path != "" {
						p = path + "." + name
					}
					if err := walkSchema(sub, static, p, seen, depth+1); err != nil {
						return err
					}
				}
				continue
			}
		}
		if err := walkSchema(v, false, path, seen, depth+1); err != nil {
			return err
		}
	}
	return nil
}
