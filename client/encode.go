package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	iclient "github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/internal/wire"
)

// This file builds the wire form of a request in one pass: the params
// object with its _meta appended to a buffer (the era's required _meta
// members are encoded once per client), and the HTTP headers of revision
// 2026-07-28, shared between calls when they carry no Mcp-Param-*
// header.

// metaPrefix returns the encoded start of every modern request's _meta
// (without the closing brace).
func (c *Client) metaPrefix() []byte {
	c.prefixOnce.Do(func() {
		b := []byte(`{"` + protocol.MetaProtocolVersion + `":`)
		b = wire.AppendString(b, c.sess.Version())
		b = append(b, `,"`+protocol.MetaClientCapabilities+`":`...)
		b = append(b, c.meta...)
		info, _ := json.Marshal(c.opts.ClientInfo)
		b = append(b, `,"`+protocol.MetaClientInfo+`":`...)
		b = append(b, info...)
		c.prefix = b
	})
	return c.prefix
}

// appendValue appends v as JSON.
func appendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case json.RawMessage:
		if len(v) == 0 {
			return append(b, "null"...), nil
		}
		return append(b, v...), nil
	case string:
		return wire.AppendString(b, v), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, raw...), nil
}

// encodeParams encodes params (whose values are strings, json.RawMessage
// or anything json.Marshal takes) with the request's _meta.
func (c *Client) encodeParams(params map[string]any, st *callState) (json.RawMessage, error) {
	b := make([]byte, 0, 256)
	b = append(b, '{')
	first := true
	for k, v := range params {
		if k == "_meta" {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = wire.AppendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, v); err != nil {
			return nil, err
		}
	}
	mark := len(b)
	if !first {
		b = append(b, ',')
	}
	b = append(b, `"_meta":`...)
	withMeta, err := c.appendMeta(b, st)
	if err != nil {
		return nil, err
	}
	if withMeta == nil {
		b = b[:mark]
	} else {
		b = withMeta
	}
	return append(b, '}'), nil
}

// appendMeta appends the request's _meta to dst, or returns nil for none
// (a legacy request without extra keys).
func (c *Client) appendMeta(dst []byte, st *callState) ([]byte, error) {
	modern := c.ev.perRequestMeta()
	b := dst
	if modern {
		// A caller's key that overrides a required one: the general path.
		for _, m := range [...]map[string]any{st.cfg.meta, st.cfg.icMeta} {
			for k := range m {
				if strings.HasPrefix(k, protocol.MetaPrefix) {
					raw, err := json.Marshal(c.metaFor(st))
					return append(dst, raw...), err
				}
			}
		}
		b = append(b, c.metaPrefix()...)
	} else {
		if st.token == "" && len(st.cfg.meta) == 0 && len(st.cfg.icMeta) == 0 {
			return nil, nil
		}
		b = append(b, '{')
	}
	start := len(dst)
	sep := func() {
		if len(b) > start+1 {
			b = append(b, ',')
		}
	}
	if modern && st.cfg.level != "" {
		sep()
		b = append(b, `"`+protocol.MetaLogLevel+`":`...)
		b = wire.AppendString(b, string(st.cfg.level))
	}
	if st.token != "" {
		sep()
		b = append(b, `"progressToken":`...)
		b = wire.AppendString(b, st.token)
	}
	for k, v := range st.cfg.icMeta {
		if _, over := st.cfg.meta[k]; over || (k == "progressToken" && st.token != "") {
			continue
		}
		sep()
		b = wire.AppendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, v); err != nil {
			return nil, err
		}
	}
	for k, v := range st.cfg.meta {
		if k == "progressToken" && st.token != "" {
			continue
		}
		sep()
		b = wire.AppendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, v); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// headerCache shares the headers of requests without Mcp-Param-*
// headers (the HTTP connection only reads them).
type headerCache struct {
	mu sync.Mutex
	m  map[headerKey]http.Header
}

// headerKey names the shared headers of one method and name.
type headerKey struct{ method, name string }

const maxCachedHeaders = 1024

// modernHeaders returns the revision 2026-07-28 headers of a request:
// MCP-Protocol-Version, Mcp-Method, Mcp-Name, and for a tools/call of a
// tool with x-mcp-header parameters its Mcp-Param-* headers.
func (c *Client) modernHeaders(method string, params map[string]any) (http.Header, error) {
	name := ""
	if key := nameKey(method); key != "" {
		name = paramString(params, key)
	}
	if method == "tools/call" {
		c.mu.Lock()
		schema := c.headerTools[name]
		c.mu.Unlock()
		if schema != nil {
			args, _ := params["arguments"].(json.RawMessage)
			ph, err := iclient.ParamHeaders(schema, args)
			if err != nil {
				return nil, err
			}
			h := c.baseHeaders(method, name).Clone()
			for k, v := range ph {
				h[k] = v
			}
			return h, nil
		}
	}
	return c.baseHeaders(method, name), nil
}

// nameKey returns the params member that a request of method mirrors into
// its Mcp-Name header, or "" for a method with none.
func nameKey(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId"
	}
	return ""
}

// checkName refuses a request whose name (the member mirrored into
// Mcp-Name) is not valid UTF-8: JSON would carry it with U+FFFD in place
// of the bad bytes and the header with the bytes as given, so a server
// checking that the two match would refuse the call, and over any
// transport the call would name a tool other than the one asked for.
func checkName(method string, params map[string]any) error {
	key := nameKey(method)
	if key == "" {
		return nil
	}
	if s, ok := params[key].(string); ok && !utf8.ValidString(s) {
		return fmt.Errorf("params.%s %q is not valid UTF-8", key, s)
	}
	return nil
}

func (c *Client) baseHeaders(method, name string) http.Header {
	key := headerKey{method, name}
	c.headers.mu.Lock()
	defer c.headers.mu.Unlock()
	if h, ok := c.headers.m[key]; ok {
		return h
	}
	h := http.Header{
		protocol.HeaderProtocolVersion: {c.sess.Version()},
		protocol.HeaderMethod:          {method},
	}
	if name != "" {
		h[protocol.HeaderName] = []string{iclient.EncodeHeaderValue(name)}
	}
	if c.headers.m == nil || len(c.headers.m) >= maxCachedHeaders {
		c.headers.m = map[headerKey]http.Header{}
	}
	c.headers.m[key] = h
	return h
}

// request builds the wire request.
func (c *Client) request(method string, params map[string]any, st *callState) (*iclient.Request, error) {
	req := new(iclient.Request)
	if err := c.fillRequest(req, method, params, st); err != nil {
		return nil, err
	}
	return req, nil
}

// fillRequest builds the wire request in req (the one of a callState, so
// that a call allocates one object for both).
func (c *Client) fillRequest(req *iclient.Request, method string, params map[string]any, st *callState) error {
	if err := checkName(method, params); err != nil {
		return err
	}
	body, err := c.encodeParams(params, st)
	if err != nil {
		return err
	}
	*req = iclient.Request{Method: method, Params: body}
	if c.http && c.ev.perRequestMeta() {
		if req.Header, err = c.modernHeaders(method, params); err != nil {
			return err
		}
	}
	return nil
}

// paramString returns the string member key of params (a string, or a
// json.RawMessage holding one), or "".
func paramString(params map[string]any, key string) string {
	switch v := params[key].(type) {
	case string:
		return v
	case json.RawMessage:
		s, _ := jsonscan.String(v)
		return s
	}
	return ""
}
