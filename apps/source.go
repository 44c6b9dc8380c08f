package apps

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// serverSource is a Source that reads a server in process through
// Server.Handle, as a 2026-07-28 client that declares the extension.
type serverSource struct {
	s  *mcp.Server
	id atomic.Int64
}

// call sends one request and returns its result, or the server's error as
// a *jsonrpc.Error.
func (src *serverSource) call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.LatestVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{ExtensionID: Extension()}},
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": src.id.Add(1), "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	msg, jerr := jsonrpc.Decode(body)
	if jerr != nil {
		return nil, jerr
	}
	out, _ := src.s.Handle(ctx, nil, &mcp.Incoming{Message: &msg}, nil)
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("%s: malformed response: %w", method, err)
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// list yields every item of a paginated list.
func list[T any](src *serverSource, ctx context.Context, method, field string) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		cursor := ""
		for {
			var params map[string]any
			if cursor != "" {
				params = map[string]any{"cursor": cursor}
			}
			raw, err := src.call(ctx, method, params)
			if err != nil {
				yield(nil, err)
				return
			}
			var m map[string]json.RawMessage
			var items []*T
			var next string
			err = json.Unmarshal(raw, &m)
			if err == nil {
				err = json.Unmarshal(m[field], &items)
			}
			if err == nil && m["nextCursor"] != nil {
				err = json.Unmarshal(m["nextCursor"], &next)
			}
			if err != nil {
				yield(nil, fmt.Errorf("%s: malformed result: %w", method, err))
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			cursor = next
		}
	}
}

func (src *serverSource) ListTools(ctx context.Context) iter.Seq2[*mcp.Tool, error] {
	return list[mcp.Tool](src, ctx, "tools/list", "tools")
}

func (src *serverSource) ListResources(ctx context.Context) iter.Seq2[*mcp.Resource, error] {
	return list[mcp.Resource](src, ctx, "resources/list", "resources")
}

func (src *serverSource) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	raw, err := src.call(ctx, "resources/read", map[string]any{"uri": uri})
	if err != nil {
		return nil, err
	}
	var r mcp.ReadResourceResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("resources/read: %w", err)
	}
	return &r, nil
}

func (src *serverSource) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	raw, err := src.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return nil, err
	}
	var r mcp.CallToolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("tools/call: %w", err)
	}
	return &r, nil
}
