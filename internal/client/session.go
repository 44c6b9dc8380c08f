package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// ServerDescription is what a server said about itself, in
// server/discover (modern) or in its initialize result (legacy).
type ServerDescription struct {
	// Info is the server's self-reported identity (an mcp.Implementation)
	// as it sent it, every field included; nil if it sent none.
	Info json.RawMessage `json:"serverInfo,omitempty"`
	// SupportedVersions lists the versions a modern server serves; legacy
	// servers do not advertise theirs.
	SupportedVersions []string `json:"supportedVersions,omitempty"`
	// Capabilities is the capabilities object as sent.
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
	// Instructions is the optional guidance for models.
	Instructions string `json:"instructions,omitempty"`
	// TTLMs and CacheScope are the caching hints of a DiscoverResult; nil
	// and "" when absent.
	TTLMs      *int64 `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
	// Result is the result object as received.
	Result json.RawMessage `json:"-"`
}

// discoverResult is the wire shape of a DiscoverResult.
type discoverResult struct {
	SupportedVersions []string        `json:"supportedVersions"`
	Capabilities      json.RawMessage `json:"capabilities"`
	Instructions      string          `json:"instructions"`
	TTLMs             *int64          `json:"ttlMs"`
	CacheScope        string          `json:"cacheScope"`
	Meta              struct {
		ServerInfo json.RawMessage `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
}

// ParseDiscoverResult decodes a DiscoverResult. It fails unless the result
// is an object with a supportedVersions array, which is what tells a
// DiscoverResult from any other answer.
func ParseDiscoverResult(result json.RawMessage) (*ServerDescription, error) {
	var probe struct {
		SupportedVersions json.RawMessage `json:"supportedVersions"`
	}
	if err := json.Unmarshal(result, &probe); err != nil {
		return nil, fmt.Errorf("the result is not a JSON object: %v", err)
	}
	if len(probe.SupportedVersions) == 0 || probe.SupportedVersions[0] != '[' {
		return nil, fmt.Errorf("the result has no supportedVersions array")
	}
	var d discoverResult
	if err := json.Unmarshal(result, &d); err != nil {
		return nil, fmt.Errorf("malformed DiscoverResult: %v", err)
	}
	info, err := checkServerInfo(d.Meta.ServerInfo)
	if err != nil {
		return nil, fmt.Errorf("malformed DiscoverResult: %v", err)
	}
	return &ServerDescription{
		Info:              info,
		SupportedVersions: d.SupportedVersions,
		Capabilities:      d.Capabilities,
		Instructions:      d.Instructions,
		TTLMs:             d.TTLMs,
		CacheScope:        d.CacheScope,
		Result:            result,
	}, nil
}

// checkServerInfo returns a serverInfo as sent, nil for none (absent or
// null), or an error when it is not an object whose name, title and
// version are strings.
func checkServerInfo(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var info struct {
		Name, Title, Version string
	}
	if err := json.Unmarshal(raw, &info); err != nil || raw[0] != '{' {
		return nil, fmt.Errorf("serverInfo is not an implementation object: %s", truncate(string(raw), 80))
	}
	return raw, nil
}

// initializeResult is the wire shape of a legacy InitializeResult.
type initializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      json.RawMessage `json:"serverInfo"`
	Instructions    string          `json:"instructions"`
}

// Session is a conversation with one server whose era and protocol
// version are settled. Its methods add what every request of that era
// needs: _meta and the MCP headers (modern), or the session's headers
// (legacy). A Session is safe for concurrent use.
type Session struct {
	conn       Conn
	era        protocol.Era
	version    string
	clientInfo json.RawMessage // encoded mcp.Implementation; nil for none
	timeout    time.Duration
	caps       json.RawMessage // declared client capabilities; nil for {}

	// Server is what the server said about itself.
	Server ServerDescription
	// Steps records how Connect told the era, request by request.
	Steps []Step
	// Latency is the round trip of the request that described the server
	// (server/discover or initialize).
	Latency time.Duration
	// FirstReply is the reply to the first request Connect sent.
	FirstReply *Reply

	mu      sync.Mutex
	schemas map[string]json.RawMessage // tool name -> inputSchema
}

// NewModernSession returns a session that speaks the given modern version
// over conn without probing. clientInfo (an encoded mcp.Implementation)
// may be nil.
func NewModernSession(conn Conn, version string, clientInfo json.RawMessage) *Session {
	return &Session{conn: conn, era: protocol.EraModern, version: version, clientInfo: clientInfo, timeout: defaultTimeout}
}

// Conn returns the session's connection.
func (s *Session) Conn() Conn { return s.conn }

// Era returns the server's era: protocol.EraModern for a server that
// answers server/discover and takes per-request _meta, protocol.EraLegacy
// for one that needs an initialize handshake.
func (s *Session) Era() protocol.Era { return s.era }

// Version returns the protocol version the session speaks.
func (s *Session) Version() string { return s.version }

// Close closes the connection.
func (s *Session) Close() error { return s.conn.Close() }

// Timeout returns the per-request timeout the session applies when the
// caller's context has no deadline.
func (s *Session) Timeout() time.Duration { return s.timeout }

// Call sends one request of the session's era. params is nil, a
// json.RawMessage object, or any value that encodes to a JSON object; on
// a modern session its _meta is merged with the required members.
func (s *Session) Call(ctx context.Context, method string, params any) (*Reply, error) {
	req, err := s.request(method, params)
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok && s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	return s.conn.RoundTrip(ctx, req)
}

// Result sends one request and returns its result; a JSON-RPC error comes
// back as an *RPCError.
func (s *Session) Result(ctx context.Context, method string, params any) (json.RawMessage, error) {
	r, err := s.Call(ctx, method, params)
	if err != nil {
		return nil, err
	}
	if e := r.RPCError(); e != nil {
		return nil, &RPCError{Err: e, Status: r.Status}
	}
	if r.Msg == nil {
		return nil, fmt.Errorf("%s: no JSON-RPC response (%s)", method, r.Describe())
	}
	return r.Result(), nil
}

// RPCError is a JSON-RPC error response.
type RPCError struct {
	Err    *jsonrpc.Error
	Status int // HTTP status; 0 on stdio
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("JSON-RPC error %d: %s", e.Err.Code, e.Err.Message)
}

// Request builds the wire request for method and params as Call would send
// it, for callers that alter it before sending it with Conn().RoundTrip.
func (s *Session) Request(method string, params any) (*Request, error) {
	return s.request(method, params)
}

// request builds the wire request for method and params. (The public
// client encodes its requests in one pass itself: client/encode.go.)
func (s *Session) request(method string, params any) (*Request, error) {
	obj, err := paramsObject(params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	req := &Request{Method: method}
	if s.era == protocol.EraLegacy {
		if len(obj) > 0 {
			req.Params, _ = json.Marshal(obj)
		}
		return req, nil
	}
	meta := map[string]json.RawMessage{}
	if m, ok := obj["_meta"]; ok {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, fmt.Errorf("%s: params._meta must be an object: %w", method, err)
		}
	}
	setDefault(meta, protocol.MetaProtocolVersion, s.version)
	if len(s.caps) > 0 {
		setDefault(meta, protocol.MetaClientCapabilities, s.caps)
	} else {
		setDefault(meta, protocol.MetaClientCapabilities, json.RawMessage("{}"))
	}
	if len(s.clientInfo) > 0 {
		setDefault(meta, protocol.MetaClientInfo, s.clientInfo)
	}
	obj["_meta"], _ = json.Marshal(meta)
	req.Params, _ = json.Marshal(obj)
	req.Header = ModernHeaders(s.version, method, obj)
	if method == "tools/call" {
		var name string
		json.Unmarshal(obj["name"], &name)
		if schema := s.toolSchema(name); schema != nil {
			ph, err := ParamHeaders(schema, obj["arguments"])
			if err != nil {
				return nil, fmt.Errorf("tools/call %q: %w", name, err)
			}
			for k, v := range ph {
				req.Header[k] = v
			}
		}
	}
	return req, nil
}

func setDefault(m map[string]json.RawMessage, key string, v any) {
	if _, ok := m[key]; ok {
		return
	}
	if raw, ok := v.(json.RawMessage); ok {
		m[key] = raw
		return
	}
	m[key], _ = json.Marshal(v)
}

// paramsObject turns params into a map of its members.
func paramsObject(params any) (map[string]json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if params == nil {
		return obj, nil
	}
	raw, ok := params.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(params); err != nil {
			return nil, err
		}
	}
	if string(raw) == "null" || len(raw) == 0 {
		return obj, nil
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("params must be a JSON object: %w", err)
	}
	return obj, nil
}

// ModernHeaders returns the request metadata headers of revision
// 2026-07-28 for a request: MCP-Protocol-Version, Mcp-Method, and Mcp-Name
// for the methods that name a tool, prompt, resource or task.
func ModernHeaders(version, method string, params map[string]json.RawMessage) http.Header {
	h := http.Header{}
	h.Set(protocol.HeaderProtocolVersion, version)
	h.Set(protocol.HeaderMethod, method)
	field := ""
	switch method {
	case "tools/call", "prompts/get":
		field = "name"
	case "resources/read":
		field = "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		field = "taskId"
	}
	if field != "" {
		var v string
		if json.Unmarshal(params[field], &v) == nil {
			h.Set(protocol.HeaderName, EncodeHeaderValue(v))
		}
	}
	return h
}

// EncodeHeaderValue returns v as an HTTP header value: as it is when it is
// plain visible ASCII, else in the Base64 sentinel form =?base64?...?=
// (also when v itself looks like that form).
func EncodeHeaderValue(v string) string {
	plain := v == strings.TrimSpace(v)
	for i := 0; plain && i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			plain = false
		}
	}
	if plain && strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") {
		plain = false
	}
	if plain {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// toolSchema returns the input schema of a tool seen in a tools/list.
func (s *Session) toolSchema(name string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.schemas[name]
}

// RememberTools records the input schemas of listed tools, so that
// tools/call can mirror x-mcp-header parameters into Mcp-Param-* headers.
func (s *Session) RememberTools(tools []json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.schemas == nil {
		s.schemas = map[string]json.RawMessage{}
	}
	for _, t := range tools {
		var tt struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if json.Unmarshal(t, &tt) == nil && tt.Name != "" {
			s.schemas[tt.Name] = tt.InputSchema
		}
	}
}

// maxPages bounds how many pages List and ListPages follow.
const maxPages = 1000

// List calls a list method (tools/list, prompts/list, resources/list,
// resources/templates/list) and follows nextCursor to the end, returning
// the items of every page. field is the result member holding the items
// ("tools", ...). Tools are remembered for tools/call.
func (s *Session) List(ctx context.Context, method, field string) ([]json.RawMessage, error) {
	all, err := ListPages(ctx, method, field, s.Result)
	if field == "tools" {
		s.RememberTools(all)
	}
	return all, err
}

// ListPages follows nextCursor through every page of a list method, with
// call sending one request and returning its result, and returns the
// items of every page as the server sent them (those of the pages before
// an error too). field is the result member holding the items. It stops
// with an error at a repeated cursor and after 1000 pages.
func ListPages(ctx context.Context, method, field string, call func(ctx context.Context, method string, params any) (json.RawMessage, error)) ([]json.RawMessage, error) {
	var (
		all    []json.RawMessage
		cursor string
		seen   = map[string]bool{}
	)
	for page := 0; ; page++ {
		if page == maxPages {
			return all, fmt.Errorf("%s: stopped after %d pages", method, maxPages)
		}
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		res, err := call(ctx, method, params)
		if err != nil {
			return all, fmt.Errorf("%s: %w", method, err)
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(res, &members); err != nil {
			return all, fmt.Errorf("%s: the result is not an object: %w", method, err)
		}
		var next string
		if raw, ok := members["nextCursor"]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &next); err != nil {
				return all, fmt.Errorf("%s: nextCursor is not a string: %w", method, err)
			}
		}
		var items []json.RawMessage
		if raw, ok := members[field]; ok {
			if err := json.Unmarshal(raw, &items); err != nil {
				return all, fmt.Errorf("%s: %s is not an array: %w", method, field, err)
			}
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return all, fmt.Errorf("%s: the server repeated cursor %q", method, next)
		}
		seen[next] = true
		cursor = next
	}
}
