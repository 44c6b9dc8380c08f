package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/mcpkit/mcpkit/mcp"
)

// CallTool calls the named tool with args (nil, or any value that encodes
// to a JSON object). A result with isError set is returned together with
// a *ToolError. When the server runs the call as a task (Options.Tasks),
// CallTool waits for it (see Task.Wait; StartTool returns the task
// instead). Call ListTools first for the tool's x-mcp-header parameters to
// be mirrored into Mcp-Param-* headers.
func (c *Client) CallTool(ctx context.Context, name string, args any, opts ...CallOption) (*mcp.CallToolResult, error) {
	res, task, err := c.StartTool(ctx, name, args, opts...)
	if task != nil {
		return task.Wait(ctx)
	}
	return res, err
}

// CallToolAs calls a tool and decodes its structuredContent into an Out
// (when the result has none, its first text content is decoded as JSON).
func CallToolAs[Out any](ctx context.Context, c *Client, name string, args any, opts ...CallOption) (Out, error) {
	var out Out
	res, err := c.CallTool(ctx, name, args, opts...)
	if err != nil {
		return out, err
	}
	raw, _ := res.StructuredContent.(json.RawMessage)
	if raw == nil {
		for _, ct := range res.Content {
			if t, ok := ct.(*mcp.TextContent); ok {
				raw = json.RawMessage(t.Text)
				break
			}
		}
	}
	if raw == nil {
		return out, &ProtocolError{Method: "tools/call", Msg: fmt.Sprintf("tool %q returned neither structuredContent nor text to decode", name)}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("client: tools/call %q: decoding the result into %T: %w", name, out, err)
	}
	return out, nil
}

// maxPages bounds how many pages a list follows.
const maxPages = 1000

// list yields the items of every page of a list method.
func listAll[T any](c *Client, ctx context.Context, method, field string, opts []CallOption, keep func(raw json.RawMessage, item *T) bool) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		cfg := newConfig(opts)
		cursor := ""
		seen := map[string]bool{}
		for page := 0; ; page++ {
			if page == maxPages {
				yield(nil, &ProtocolError{Method: method, Msg: fmt.Sprintf("stopped after %d pages", maxPages)})
				return
			}
			var p map[string]any
			if cursor != "" {
				p = map[string]any{"cursor": cursor}
			}
			res, err := c.call(ctx, method, p, cfg)
			if err != nil {
				yield(nil, err)
				return
			}
			var w struct {
				Items      map[string]json.RawMessage
				NextCursor *string `json:"nextCursor"`
			}
			var members map[string]json.RawMessage
			if err := json.Unmarshal(res, &members); err != nil {
				yield(nil, &ProtocolError{Method: method, Msg: "malformed result: " + err.Error()})
				return
			}
			if nc, ok := members["nextCursor"]; ok && string(nc) != "null" {
				if err := json.Unmarshal(nc, &w.NextCursor); err != nil {
					yield(nil, &ProtocolError{Method: method, Msg: "nextCursor is not a string"})
					return
				}
			}
			var items []json.RawMessage
			if raw, ok := members[field]; ok {
				if err := json.Unmarshal(raw, &items); err != nil {
					yield(nil, &ProtocolError{Method: method, Msg: field + " is not an array"})
					return
				}
			}
			for _, raw := range items {
				item := new(T)
				if err := json.Unmarshal(raw, item); err != nil {
					yield(nil, &ProtocolError{Method: method, Msg: fmt.Sprintf("malformed item in %s: %v", field, err)})
					return
				}
				if keep != nil && !keep(raw, item) {
					continue
				}
				if !yield(item, nil) {
					return
				}
			}
			if w.NextCursor == nil || *w.NextCursor == "" {
				return
			}
			if seen[*w.NextCursor] {
				yield(nil, &ProtocolError{Method: method, Msg: fmt.Sprintf("the server repeated cursor %q", *w.NextCursor)})
				return
			}
			seen[*w.NextCursor] = true
			cursor = *w.NextCursor
		}
	}
}

// ListTools yields the server's tools, page after page. A tool whose
// x-mcp-header declarations are invalid is left out (with a warning in
// Options.Logger), as the specification requires; the others are
// remembered so that CallTool mirrors their annotated arguments into
// Mcp-Param-* headers.
func (c *Client) ListTools(ctx context.Context, opts ...CallOption) iter.Seq2[*mcp.Tool, error] {
	return listAll(c, ctx, "tools/list", "tools", opts, func(raw json.RawMessage, t *mcp.Tool) bool {
		schema, _ := t.InputSchema.(json.RawMessage)
		if err := checkHeaderDecls(schema); err != nil {
			c.log.Warn("client: leaving out a tool with an invalid x-mcp-header declaration", "tool", t.Name, "reason", err.Error())
			return false
		}
		if bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
			c.mu.Lock()
			if len(c.headerTools) < 10000 {
				c.headerTools[t.Name] = schema
			}
			c.mu.Unlock()
		}
		return true
	})
}

// ListResources yields the server's resources, page after page.
func (c *Client) ListResources(ctx context.Context, opts ...CallOption) iter.Seq2[*mcp.Resource, error] {
	return listAll[mcp.Resource](c, ctx, "resources/list", "resources", opts, nil)
}

// ListResourceTemplates yields the server's resource templates.
func (c *Client) ListResourceTemplates(ctx context.Context, opts ...CallOption) iter.Seq2[*mcp.ResourceTemplate, error] {
	return listAll[mcp.ResourceTemplate](c, ctx, "resources/templates/list", "resourceTemplates", opts, nil)
}

// ListPrompts yields the server's prompts, page after page.
func (c *Client) ListPrompts(ctx context.Context, opts ...CallOption) iter.Seq2[*mcp.Prompt, error] {
	return listAll[mcp.Prompt](c, ctx, "prompts/list", "prompts", opts, nil)
}

// ReadResource reads the resource at uri.
func (c *Client) ReadResource(ctx context.Context, uri string, opts ...CallOption) (*mcp.ReadResourceResult, error) {
	res, err := c.call(ctx, "resources/read", map[string]any{"uri": uri}, newConfig(opts))
	if err != nil {
		return nil, err
	}
	var out mcp.ReadResourceResult
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, &ProtocolError{Method: "resources/read", Msg: "malformed ReadResourceResult: " + err.Error()}
	}
	return &out, nil
}

// GetPrompt renders the named prompt with args.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...CallOption) (*mcp.GetPromptResult, error) {
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	res, err := c.call(ctx, "prompts/get", p, newConfig(opts))
	if err != nil {
		return nil, err
	}
	var out mcp.GetPromptResult
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, &ProtocolError{Method: "prompts/get", Msg: "malformed GetPromptResult: " + err.Error()}
	}
	return &out, nil
}

// Ref names what a completion/complete request completes an argument of.
type Ref struct {
	// Type is "ref/prompt" or "ref/resource".
	Type string `json:"type"`
	// Name is the prompt's name (ref/prompt).
	Name string `json:"name,omitempty"`
	// URI is the resource template (ref/resource).
	URI string `json:"uri,omitempty"`
}

// PromptRef refers to a prompt's arguments.
func PromptRef(name string) Ref { return Ref{Type: "ref/prompt", Name: name} }

// ResourceRef refers to a resource template's variables.
func ResourceRef(uriTemplate string) Ref { return Ref{Type: "ref/resource", URI: uriTemplate} }

// CompleteParams is a completion/complete request.
type CompleteParams struct {
	Ref Ref
	// Argument is the argument's name, Value what the user typed so far.
	Argument string
	Value    string
	// Context holds the values of the arguments already resolved.
	Context map[string]string
}

// Complete asks the server for completion suggestions.
func (c *Client) Complete(ctx context.Context, p *CompleteParams, opts ...CallOption) (*mcp.CompleteResult, error) {
	params := map[string]any{
		"ref":      p.Ref,
		"argument": map[string]string{"name": p.Argument, "value": p.Value},
	}
	if len(p.Context) > 0 {
		params["context"] = map[string]any{"arguments": p.Context}
	}
	res, err := c.call(ctx, "completion/complete", params, newConfig(opts))
	if err != nil {
		return nil, err
	}
	var out mcp.CompleteResult
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, &ProtocolError{Method: "completion/complete", Msg: "malformed CompleteResult: " + err.Error()}
	}
	return &out, nil
}
