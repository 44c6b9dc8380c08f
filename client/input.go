package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// errNoHandler says that the server asked for input the client did not
// declare.
var errNoHandler = errors.New("the client has no handler for it (and did not declare the capability)")

// answerInput runs the handler for one input request (an MRTR input
// request, or a legacy server's request) and returns its encoded result.
func (c *Client) answerInput(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	if c.opts.Input != nil {
		out, err := c.opts.Input(ctx, method, params)
		if err == nil && !isObject(out) {
			err = fmt.Errorf("the input handler's %s result is not a JSON object", method)
		}
		return out, err
	}
	switch method {
	case "elicitation/create":
		if c.opts.Elicit == nil {
			return nil, errNoHandler
		}
		var p mcp.ElicitParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("malformed elicitation params: %w", err)
		}
		if p.Mode == mcp.ElicitModeURL && !c.opts.ElicitURL {
			return nil, errors.New("URL-mode elicitation, which the client did not declare")
		}
		if p.Mode != mcp.ElicitModeForm && p.Mode != mcp.ElicitModeURL {
			return nil, fmt.Errorf("unknown elicitation mode %q", p.Mode)
		}
		res, err := c.opts.Elicit(ctx, &p)
		if err != nil {
			return nil, err
		}
		if res == nil {
			res = &mcp.ElicitResult{Action: mcp.ElicitCancel}
		}
		out := *res
		if out.Action == mcp.ElicitAccept && p.Mode == mcp.ElicitModeForm {
			out.Content = applyDefaults(p.RequestedSchema, out.Content)
		} else if p.Mode == mcp.ElicitModeURL {
			out.Content = nil
		}
		return json.Marshal(&out)
	case "sampling/createMessage":
		if c.opts.Sample == nil {
			return nil, errNoHandler
		}
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("malformed sampling params: %w", err)
		}
		res, err := c.opts.Sample(ctx, &p)
		if err != nil {
			return nil, err
		}
		if res == nil {
			return nil, errors.New("the sampling handler returned no result")
		}
		if res.Role == "" {
			r := *res
			r.Role = mcp.RoleAssistant
			res = &r
		}
		return json.Marshal(res)
	case "roots/list":
		if c.opts.Roots == nil {
			return nil, errNoHandler
		}
		roots, err := c.opts.Roots(ctx)
		if err != nil {
			return nil, err
		}
		if roots == nil {
			roots = []mcp.Root{}
		}
		return json.Marshal(&mcp.ListRootsResult{Roots: roots})
	}
	return nil, fmt.Errorf("unknown input request method %q", method)
}

// applyDefaults fills the properties an accepted form left out with the
// defaults of the requested schema (SEP-1034).
func applyDefaults(schema any, content map[string]any) map[string]any {
	raw, ok := schema.(json.RawMessage)
	if !ok {
		return content
	}
	var s struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return content
	}
	for name, p := range s.Properties {
		if len(p.Default) == 0 {
			continue
		}
		if _, ok := content[name]; ok {
			continue
		}
		var v any
		if json.Unmarshal(p.Default, &v) != nil {
			continue
		}
		if content == nil {
			content = map[string]any{}
		}
		content[name] = v
	}
	return content
}

// onServerRequest answers a request a legacy server sent.
func (c *Client) onServerRequest(ctx context.Context, m *jsonrpc.Message) []byte {
	id := m.ID.Clone()
	switch m.Method {
	case "ping":
		return jsonrpc.AppendResult(nil, id, []byte("{}"))
	case "elicitation/create", "sampling/createMessage", "roots/list":
		out, err := c.answerInput(ctx, m.Method, m.Params)
		if errors.Is(err, errNoHandler) {
			return jsonrpc.AppendError(nil, id, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: m.Method + ": " + err.Error()})
		}
		var me *mcp.Error
		if errors.As(err, &me) {
			return jsonrpc.AppendError(nil, id, &jsonrpc.Error{Code: me.Code, Message: me.Message})
		}
		if err != nil {
			return jsonrpc.AppendError(nil, id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
		}
		return jsonrpc.AppendResult(nil, id, out)
	}
	return jsonrpc.AppendError(nil, id, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + m.Method})
}

// onRequestNotify routes a notification that arrived for one request.
func (c *Client) onRequestNotify(st *callState, raw []byte, m *jsonrpc.Message) {
	switch m.Method {
	case "notifications/progress":
		if st.cfg.progress != nil {
			if p, ok := decodeProgress(m.Params); ok {
				st.cfg.progress(p)
			}
			return
		}
	case "notifications/message":
		if st.cfg.log != nil {
			if lm, ok := decodeLog(m.Params); ok {
				st.cfg.log(lm)
			}
			return
		}
	}
	c.onNotify(raw, m)
}

// onNotify routes a notification no request took.
func (c *Client) onNotify(raw []byte, m *jsonrpc.Message) {
	c.observe(m)
	if id := subscriptionID(m.Params); id != "" {
		c.mu.Lock()
		deliver := c.subs[id]
		c.mu.Unlock()
		if deliver != nil {
			deliver(m)
			return
		}
	}
	if c.legacy.Load() {
		c.mu.Lock()
		fns := make([]func(*jsonrpc.Message) bool, 0, len(c.legacySubs))
		for _, fn := range c.legacySubs {
			fns = append(fns, fn)
		}
		c.mu.Unlock()
		took := false
		for _, fn := range fns {
			took = fn(m) || took // every listener whose filter wants it gets it
		}
		if took {
			return
		}
	}
	switch m.Method {
	case "notifications/progress":
		var w struct {
			Token json.RawMessage `json:"progressToken"`
		}
		if json.Unmarshal(m.Params, &w) != nil {
			return
		}
		var tok string
		if json.Unmarshal(w.Token, &tok) != nil {
			return
		}
		c.mu.Lock()
		st := c.progress[tok]
		c.mu.Unlock()
		if st != nil && st.cfg.progress != nil {
			if p, ok := decodeProgress(m.Params); ok {
				st.cfg.progress(p)
			}
		}
		return
	case "notifications/message":
		if c.opts.OnLog != nil {
			if lm, ok := decodeLog(m.Params); ok {
				c.opts.OnLog(lm)
			}
			return
		}
	}
	if c.opts.OnNotification != nil {
		n := &Notification{Method: m.Method}
		if len(m.Params) > 0 {
			n.Params = append(json.RawMessage(nil), m.Params...)
		}
		c.opts.OnNotification(n)
	}
}

func decodeProgress(params json.RawMessage) (Progress, bool) {
	var w struct {
		Progress *float64 `json:"progress"`
		Total    float64  `json:"total"`
		Message  string   `json:"message"`
	}
	if json.Unmarshal(params, &w) != nil || w.Progress == nil {
		return Progress{}, false
	}
	return Progress{Progress: *w.Progress, Total: w.Total, Message: w.Message}, true
}

func decodeLog(params json.RawMessage) (*LogMessage, bool) {
	var w struct {
		Level  mcp.LogLevel    `json:"level"`
		Logger string          `json:"logger"`
		Data   json.RawMessage `json:"data"`
	}
	if json.Unmarshal(params, &w) != nil || w.Level == "" {
		return nil, false
	}
	return &LogMessage{Level: w.Level, Logger: w.Logger, Data: append(json.RawMessage(nil), w.Data...)}, true
}

// observe sees every notification before it is routed (cache
// invalidation).
func (c *Client) observe(m *jsonrpc.Message) {
	if c.cache != nil && m.IsNotification() {
		c.cache.invalidate(m)
	}
}

// isObject reports whether raw is a JSON object (leading space allowed).
func isObject(raw json.RawMessage) bool {
	for _, b := range raw {
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return b == '{' && json.Valid(raw)
	}
	return false
}
