package bridge

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpkit/mcpkit/mcp"
)

// schemas caches the backend's tool input schemas per session key (a
// backend may list other tools to other capabilities), for the front's
// Mcp-Param-* header checks. A list change empties it.
type schemas struct {
	mu    sync.Mutex
	byKey map[string]map[string]json.RawMessage
}

// maxSchemaPages bounds the tools/list pages read to fill the cache.
const maxSchemaPages = 20

// forget empties the cache (the backend's tools changed).
func (c *schemas) forget() {
	c.mu.Lock()
	c.byKey = nil
	c.mu.Unlock()
}

// inputSchema returns the input schema of tool for key, listing the
// backend's tools on s the first time.
func (c *schemas) inputSchema(ctx context.Context, s *session, key, tool string) json.RawMessage {
	c.mu.Lock()
	m, ok := c.byKey[key]
	c.mu.Unlock()
	if !ok {
		m = map[string]json.RawMessage{}
		cursor := ""
		for range maxSchemaPages {
			params := map[string]any{}
			if cursor != "" {
				params["cursor"] = cursor
			}
			raw, err := s.c.Call(ctx, "tools/list", params)
			if err != nil {
				return nil // not cached: the backend validates
			}
			var page struct {
				Tools []struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
				NextCursor string `json:"nextCursor"`
			}
			if json.Unmarshal(raw, &page) != nil {
				return nil
			}
			for _, t := range page.Tools {
				m[t.Name] = t.InputSchema
			}
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		c.mu.Lock()
		if c.byKey == nil {
			c.byKey = map[string]map[string]json.RawMessage{}
		}
		c.byKey[key] = m
		c.mu.Unlock()
	}
	return m[tool]
}

// checkHeaders checks a tools/call's Mcp-Param-* headers against the
// backend tool's schema.
func (b *Bridge) checkHeaders(ctx context.Context, req *mcp.MethodRequest, s *session, key string, params json.RawMessage) error {
	if req.Method != "tools/call" || req.Info.Header == nil {
		return nil
	}
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(params, &p) != nil || p.Name == "" {
		return nil
	}
	return req.CheckParamHeaders(b.schemas.inputSchema(ctx, s, key, p.Name))
}
