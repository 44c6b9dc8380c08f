package mcp

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The header keys (protocol.Header*) are canonical: net/http canonicalizes
// incoming header names, so the checks below are case-insensitive in the
// header name.

// validate checks a request in the order that revision 2026-07-28 and the
// conformance suite require, and returns the served protocol version and
// the scanned _meta. hh holds the request's Mcp-Protocol-Version,
// Mcp-Method and Mcp-Name headers; it is nil on transports without headers.
// mv, when not nil, holds the _meta that the transport read while decoding.
//
//  1. MCP-Protocol-Version header missing while _meta names a version: -32020
//  2. _meta, its protocolVersion or its clientCapabilities missing: -32602
//  3. header version differs from _meta version: -32020
//  4. version not served: -32022 with data.supported and data.requested
//  5. Mcp-Method missing or different from the body: -32020
//  6. Mcp-Name missing or different from params.name/uri/taskId: -32020
//
// Row 7 (Mcp-Param-* headers) needs the tool and runs at the start of
// tools/call; row 8 (unknown method, -32601) and row 9 (missing client
// capability, -32021) follow in Handle and in the method handlers.
func (s *Server) validate(msg *jsonrpc.Message, hh *httpHeaders, mv *metaVisitor) (string, reqMeta, *Error) {
	var rm reqMeta
	var err *Error
	if mv != nil && mv.done {
		rm, err = mv.rm, mv.err // read while decoding
	} else {
		rm, err = scanMeta(msg.Params)
	}
	if err != nil {
		return "", rm, err
	}
	var hv []string
	if hh != nil {
		hv = hh.protocolVersion
		if len(hv) == 0 && rm.version != nil {
			return "", rm, headerMismatch("missing required MCP-Protocol-Version header")
		}
	}
	switch {
	case !rm.p.present:
		return "", rm, InvalidParams("Invalid params: missing params._meta with " + protocol.MetaProtocolVersion + " and " + protocol.MetaClientCapabilities)
	case rm.version == nil:
		return "", rm, InvalidParams("Invalid params: missing _meta[\"" + protocol.MetaProtocolVersion + "\"]")
	case rm.caps == nil:
		return "", rm, InvalidParams("Invalid params: missing _meta[\"" + protocol.MetaClientCapabilities + "\"]")
	case jsonscan.Kind(rm.version) != '"':
		return "", rm, InvalidParams("Invalid params: _meta[\"" + protocol.MetaProtocolVersion + "\"] must be a string")
	case !jsonscan.IsObject(rm.caps):
		return "", rm, InvalidParams("Invalid params: _meta[\"" + protocol.MetaClientCapabilities + "\"] must be an object")
	}
	if hh != nil {
		if len(hv) != 1 || !jsonscan.StringEqual(rm.version, hv[0]) {
			got := strings.Join(hv, ", ")
			want, _ := jsonscan.String(rm.version)
			return "", rm, headerMismatch("header mismatch: MCP-Protocol-Version header value '" + got + "' does not match body value '" + want + "'")
		}
	}
	raw, _ := jsonscan.StringBytes(rm.version)
	version := s.supports(raw)
	if version == "" {
		return "", rm, s.unsupportedVersion(rm.version)
	}
	if hh != nil {
		if e := checkStandardHeaders(msg, &rm.p, hh, s.nameField(msg.Method)); e != nil {
			return "", rm, e
		}
	}
	return version, rm, nil
}

// unsupportedVersion builds the -32022 error. requested is the raw JSON
// string of the requested version.
func (s *Server) unsupportedVersion(requested []byte) *Error {
	data := []byte(`{"supported":`)
	data = append(data, mustMarshal(s.versions)...)
	data = append(data, `,"requested":`...)
	data = append(data, requested...)
	data = append(data, '}')
	req, _ := jsonscan.String(requested)
	msg := "Unsupported protocol version " + req + "; this server supports " + strings.Join(s.versions, ", ")
	if s.isLegacyVersion(req) {
		// A legacy version in modern _meta (legacy.go).
		msg = "Unsupported protocol version " + req + " in _meta: legacy versions are served after an initialize handshake; requests with _meta use " + strings.Join(s.modern, ", ")
	}
	return &Error{
		Code:    CodeUnsupportedVersion,
		Message: msg,
		Data:    json.RawMessage(data),
	}
}

func headerMismatch(msg string) *Error {
	return &Error{Code: CodeHeaderMismatch, Message: msg}
}

// checkStandardHeaders checks Mcp-Method and Mcp-Name against the body.
// p holds the spans of msg.Params; field is the params member Mcp-Name
// mirrors ("" for none).
func checkStandardHeaders(msg *jsonrpc.Message, p *paramSpans, hh *httpHeaders, field string) *Error {
	mv := hh.method
	if len(mv) == 0 {
		return headerMismatch("missing required Mcp-Method header")
	}
	if len(mv) > 1 || mv[0] != msg.Method {
		return headerMismatch("header mismatch: Mcp-Method header value '" + strings.Join(mv, ", ") + "' does not match body value '" + msg.Method + "'")
	}
	if field == "" {
		return nil
	}
	body, present := p.lookup(msg.Params, field)
	if present && jsonscan.Kind(body) != '"' {
		// A malformed body, not a header that disagrees with it.
		return InvalidParams("Invalid params: " + field + " must be a string")
	}
	nv := hh.name
	if len(nv) == 0 {
		return headerMismatch("missing required Mcp-Name header for method \"" + msg.Method + "\"")
	}
	if len(nv) > 1 {
		return headerMismatch("header mismatch: more than one Mcp-Name header")
	}
	hval, err := decodeHeaderValue(strings.TrimSpace(nv[0]))
	if err != nil {
		return headerMismatch("header mismatch: Mcp-Name header contains invalid Base64 encoding")
	}
	if !jsonscan.StringEqual(body, hval) {
		bv, _ := jsonscan.String(body)
		return headerMismatch("header mismatch: Mcp-Name header value '" + hval + "' does not match body value '" + bv + "'")
	}
	return nil
}

// nameField names the params member that Mcp-Name mirrors for method, a
// core method or a custom one (AddMethod), or "" when the method has no
// Mcp-Name header.
func (s *Server) nameField(method string) string {
	if f := nameField(method); f != "" {
		return f
	}
	if cm := s.snapshot().custom[method]; cm != nil {
		return cm.opts.NameParam
	}
	return ""
}

// nameField names the params member that Mcp-Name mirrors for a core
// method, or "" when the method has no Mcp-Name header.
func nameField(method string) string {
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

// decodeHeaderValue decodes the Base64 sentinel form `=?base64?...?=` of an
// Mcp-Name or Mcp-Param-* value; other values are returned as they are.
func decodeHeaderValue(v string) (string, error) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, nil
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, nil // no suffix: a literal value
	}
	b, err := base64.StdEncoding.Strict().DecodeString(inner)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// checkParamHeaders is validation row 7: every x-mcp-header parameter with
// a value in the arguments must arrive as its Mcp-Param-* header with the
// same value (Base64 sentinel decoded; integers compared numerically), and
// a header must not arrive without its value.
func checkParamHeaders(hs []paramHeader, args []byte, header http.Header) *Error {
	for _, ph := range hs {
		v, ok := valueAt(args, ph.path)
		hv := header[ph.header]
		if !ok || jsonscan.Kind(v) == 'n' {
			if len(hv) > 0 {
				return headerMismatch("header mismatch: " + ph.header + " header sent, but parameter \"" + strings.Join(ph.path, ".") + "\" has no value in the arguments")
			}
			continue
		}
		if len(hv) == 0 {
			return headerMismatch("header mismatch: missing " + ph.header + " header for parameter \"" + strings.Join(ph.path, ".") + "\"")
		}
		if len(hv) > 1 {
			return headerMismatch("header mismatch: more than one " + ph.header + " header")
		}
		if !headerSafe(hv[0]) {
			return headerMismatch("header mismatch: " + ph.header + " header contains invalid characters")
		}
		got, err := decodeHeaderValue(strings.TrimSpace(hv[0]))
		if err != nil {
			return headerMismatch("header mismatch: " + ph.header + " header contains invalid Base64 encoding")
		}
		if !paramMatches(ph.typ, v, got) {
			return headerMismatch("header mismatch: " + ph.header + " header value '" + got + "' does not match the body value of parameter \"" + strings.Join(ph.path, ".") + "\"")
		}
	}
	return nil
}

// valueAt returns the value at a chain of object keys.
func valueAt(obj []byte, path []string) ([]byte, bool) {
	v := obj
	for _, k := range path {
		var ok bool
		if v, ok = jsonscan.Lookup(v, k); !ok {
			return nil, false
		}
	}
	return v, true
}

// paramMatches compares a body value with a decoded header value.
func paramMatches(typ string, body []byte, header string) bool {
	switch jsonscan.Kind(body) {
	case '"':
		return jsonscan.StringEqual(body, header)
	case 't', 'f':
		return string(body) == header
	default: // a number: compare numerically
		var a, b json.Number
		if json.Unmarshal(body, &a) != nil || json.Unmarshal([]byte(strconvQuote(header)), &b) != nil {
			return false
		}
		af, err1 := a.Float64()
		bf, err2 := b.Float64()
		return err1 == nil && err2 == nil && af == bf
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// headerSafe reports whether v holds only visible ASCII, space and tab.
func headerSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}
