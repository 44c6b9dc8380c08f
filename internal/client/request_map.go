package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// The request path of the public client: its params are a map[string]any
// whose values are mostly json.RawMessage and strings, with _meta a
// map[string]any. requestFromMap encodes such params in one pass into one
// buffer, where request's general path encodes them, decodes them back
// into members, decodes and re-encodes _meta and encodes the whole again
// (about 70 allocations a tools/call, against about 15 here). The wire
// result is the same JSON (members in sorted order, as encoding/json
// writes maps); TestRequestFromMapMatches compares the two paths.

// maxFastKeys bounds the members the fast path handles with its stack
// buffers; more take the general path.
const maxFastKeys = 16

// requestFromMap builds the request for params m, or reports false when m
// holds something the fast path does not handle (then request's general
// path runs).
func (s *Session) requestFromMap(method string, m map[string]any) (*Request, bool, error) {
	if len(m) > maxFastKeys {
		return nil, false, nil
	}
	var meta map[string]any
	if v, ok := m["_meta"]; ok {
		if meta, ok = v.(map[string]any); !ok || len(meta) > maxFastKeys {
			return nil, false, nil
		}
	}
	var keyBuf [maxFastKeys]string
	keys := keyBuf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	buf := make([]byte, 0, 512)
	buf = append(buf, '{')
	modern := s.era != EraLegacy
	wroteMeta := false
	first := true
	var err error
	member := func(k string) {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = wire.AppendString(buf, k)
		buf = append(buf, ':')
	}
	for _, k := range keys {
		if modern && !wroteMeta && k > "_meta" {
			member("_meta")
			if buf, err = s.appendMeta(buf, meta); err != nil {
				return nil, true, fmt.Errorf("%s: params._meta: %w", method, err)
			}
			wroteMeta = true
		}
		if k == "_meta" && modern {
			continue // written in its place, with the defaults
		}
		member(k)
		if buf, err = appendValue(buf, m[k]); err != nil {
			return nil, true, fmt.Errorf("%s: params.%s: %w", method, k, err)
		}
	}
	if modern && !wroteMeta {
		member("_meta")
		if buf, err = s.appendMeta(buf, meta); err != nil {
			return nil, true, fmt.Errorf("%s: params._meta: %w", method, err)
		}
	}
	buf = append(buf, '}')

	req := &Request{Method: method}
	if !modern {
		if len(m) > 0 {
			req.Params = buf
		}
		return req, true, nil
	}
	req.Params = buf
	name, named := "", false
	switch method {
	case "tools/call", "prompts/get":
		name, named = stringMember(m["name"])
	case "resources/read":
		name, named = stringMember(m["uri"])
	case "tasks/get", "tasks/update", "tasks/cancel":
		name, named = stringMember(m["taskId"])
	}
	if !s.carriesHeaders() {
		// stdio and in memory: the request metadata headers would go
		// nowhere.
		return req, true, nil
	}
	req.Header = modernHeaders(s.version, method, name, named)
	if method == "tools/call" {
		if schema := s.toolSchema(name); schema != nil {
			args, err := appendValue(nil, m["arguments"])
			if err != nil {
				return nil, true, fmt.Errorf("tools/call %q: %w", name, err)
			}
			if _, ok := m["arguments"]; !ok {
				args = nil
			}
			ph, err := ParamHeaders(schema, args)
			if err != nil {
				return nil, true, fmt.Errorf("tools/call %q: %w", name, err)
			}
			for k, v := range ph {
				req.Header[k] = v
			}
		}
	}
	return req, true, nil
}

// appendMeta appends the request's _meta: the caller's members, and the
// protocol version, client capabilities and client info where the caller
// did not set them.
func (s *Session) appendMeta(buf []byte, meta map[string]any) ([]byte, error) {
	var keyBuf [maxFastKeys + 3]string
	keys := keyBuf[:0]
	for k := range meta {
		keys = append(keys, k)
	}
	defaults := [...]string{MetaProtocolVersion, MetaClientCapabilities, MetaClientInfo}
	for _, k := range defaults {
		if _, ok := meta[k]; !ok && (k != MetaClientInfo || s.clientInfo.Name != "") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = wire.AppendString(buf, k)
		buf = append(buf, ':')
		v, ok := meta[k]
		if !ok {
			switch k {
			case MetaProtocolVersion:
				v = s.version
			case MetaClientCapabilities:
				if len(s.caps) > 0 {
					v = s.caps
				} else {
					v = json.RawMessage("{}")
				}
			case MetaClientInfo:
				v = s.clientInfo
			}
		}
		var err error
		if buf, err = appendValue(buf, v); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	return append(buf, '}'), nil
}

// appendValue appends v as JSON: a json.RawMessage compacted (after
// checking it), a string quoted, anything else as encoding/json encodes it.
func appendValue(buf []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case json.RawMessage:
		if x == nil {
			return append(buf, "null"...), nil // as json.RawMessage.MarshalJSON
		}
		if !json.Valid(x) {
			return nil, fmt.Errorf("invalid JSON %.40q", x)
		}
		return appendCompact(buf, x), nil
	case string:
		return wire.AppendString(buf, x), nil
	case nil:
		return append(buf, "null"...), nil
	case bool:
		if x {
			return append(buf, "true"...), nil
		}
		return append(buf, "false"...), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(buf, b...), nil
}

// appendCompact appends valid JSON without its insignificant whitespace.
func appendCompact(buf, src []byte) []byte {
	inString, escaped := false, false
	for _, c := range src {
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		buf = append(buf, c)
	}
	return buf
}

// stringMember returns v as a string when it is one (or a JSON string).
func stringMember(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.RawMessage:
		if len(x) > 0 && x[0] == '"' {
			var s string
			if json.Unmarshal(x, &s) == nil {
				return s, true
			}
		}
	}
	return "", false
}

// modernHeaders is ModernHeaders for a request whose name (tool, prompt,
// URI or task id) is known (named), with one allocation for the values.
func modernHeaders(version, method, name string, named bool) http.Header {
	h := make(http.Header, 3)
	vals := make([]string, 3)
	vals[0], vals[1] = version, method
	h["Mcp-Protocol-Version"] = vals[0:1:1]
	h["Mcp-Method"] = vals[1:2:2]
	if named {
		vals[2] = EncodeHeaderValue(name)
		h["Mcp-Name"] = vals[2:3:3]
	}
	return h
}

// carriesHeaders reports whether the session's connection sends HTTP
// headers (Streamable HTTP and HTTP+SSE; a session without a connection,
// in tests, counts as HTTP).
func (s *Session) carriesHeaders() bool {
	if s.conn == nil {
		return true
	}
	switch s.conn.Transport() {
	case TransportStdio, "memory":
		return false
	}
	return true
}
