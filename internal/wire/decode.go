// Package wire is the JSON-RPC decoder and the JSON string encoder behind
// packages jsonrpc and mcp. It is internal so that the hot path's
// interface (the params visitor) can change without changing the public
// API: package jsonrpc wraps Decode for everyone, and mcp's HTTP transport
// calls Decode with a Visitor to read _meta in the one validating pass.
package wire

import (
	"encoding/json"
	"strconv"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// Message is one decoded JSON-RPC message, as jsonrpc.Message has it; ID
// is the raw encoding of a string or integer id, nil when absent or null.
// Its byte slices point into the buffer given to Decode.
type Message struct {
	ID     []byte
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// Error is a JSON-RPC error object, as jsonrpc.Error has it.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// The two JSON-RPC codes the decoder sends; they are jsonrpc's
// CodeParseError and CodeInvalidRequest (a jsonrpc test checks it).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
)

// jsonrpcVersion is the only JSON-RPC version MCP speaks.
const jsonrpcVersion = "2.0"

// An Event tells a Visitor what it is given.
type Event int

const (
	// ParamsStart: a params object begins. Forget what earlier events
	// reported (a message may repeat params; the last one counts).
	ParamsStart Event = iota
	// MetaMember: a member of the object value of a params member named
	// _meta. All of them come before the ParamsMember event of that _meta.
	MetaMember
	// ParamsMember: a top-level member of params, with its whole value.
	ParamsMember
)

// A Visitor receives the members of a message's params object from
// Decode. key is the raw member name (still escaped when escaped is
// true); key and value point into the decoded buffer. For ParamsStart, key
// and value are nil.
type Visitor func(ev Event, key []byte, escaped bool, value []byte)

// Decode parses one JSON-RPC message, as jsonrpc.Decode documents, and,
// when visit is not nil, in the same validating pass it reports the
// members of the message's params object to visit: for every params object
// in the message (normally one) a ParamsStart event, then for each of its
// members a ParamsMember event, preceded, for a member named _meta (MCP's
// reserved metadata) whose value is an object, by one MetaMember event per
// member of that object. Members come in the order of the text. Events
// may be reported for a message that Decode then rejects, and for a params
// that is not the message's last; use them only when Decode returns no
// error, and only with the returned Message's Params.
func Decode(data []byte, visit Visitor) (Message, *Error) {
	var msg Message
	switch jsonscan.Kind(data) {
	case '{':
	case '[':
		if jsonscan.Valid(data) {
			return msg, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: batches are not supported"}
		}
		return msg, parseError(data)
	default:
		if jsonscan.Valid(data) {
			return msg, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: a message must be a JSON object"}
		}
		return msg, parseError(data)
	}
	var (
		version, idRaw, method []byte
		hasID, hasMethod       bool
		hasResult, hasError    bool
		errRaw                 []byte
	)
	// One pass both validates the text and reads the envelope.
	it := jsonscan.CheckObject(data)
	var m jsonscan.Member
	for it.NextKey(&m) {
		key := memberKey(&m)
		if visit != nil && string(key) == "params" {
			if v, ok := visitParams(&it, visit); ok {
				msg.Params = v
			}
			continue
		}
		var ok bool
		if m.Value, ok = it.Value(); !ok {
			break
		}
		switch string(key) {
		case "jsonrpc":
			version = m.Value
		case "id":
			idRaw, hasID = m.Value, true
		case "method":
			method, hasMethod = m.Value, true
		case "params":
			msg.Params = m.Value
		case "result":
			msg.Result, hasResult = m.Value, true
		case "error":
			errRaw, hasError = m.Value, true
		}
	}
	if !it.Valid() {
		return Message{}, parseError(data)
	}
	if hasID {
		if string(idRaw) == "null" {
			if hasMethod {
				return msg, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: id must not be null"}
			}
		} else if !ValidID(idRaw) {
			return msg, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: id must be a string or an integer"}
		} else {
			msg.ID = idRaw
		}
	}
	if !jsonscan.StringEqual(version, jsonrpcVersion) {
		return msg, &Error{Code: CodeInvalidRequest, Message: `Invalid Request: "jsonrpc" must be "2.0"`}
	}
	if hasMethod {
		name, ok := methodName(method)
		if !ok || name == "" {
			return msg, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method must be a non-empty string"}
		}
		msg.Method = name
		if msg.Params != nil {
			switch jsonscan.Kind(msg.Params) {
			case '{':
			case 'n': // params: null is treated as absent
				msg.Params = nil
			default:
				return msg, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: params must be an object"}
			}
		}
		msg.Result = nil
		return msg, nil
	}
	// A response.
	if msg.ID == nil && !hasError {
		return msg, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: a message needs a method, or an id with a result or error"}
	}
	switch {
	case hasResult && !hasError:
		return msg, nil
	case hasError && !hasResult:
		var e Error
		if err := json.Unmarshal(errRaw, &e); err != nil {
			return msg, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: malformed error object"}
		}
		msg.Error = &e
		return msg, nil
	}
	return msg, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: a response needs exactly one of result and error"}
}

// memberKey returns a member's name with escapes decoded; it allocates only
// for a name that has escapes.
func memberKey(m *jsonscan.Member) []byte {
	if !m.Escaped {
		return m.Key
	}
	if s, ok := jsonscan.String(append(append([]byte{'"'}, m.Key...), '"')); ok {
		return []byte(s)
	}
	return m.Key
}

// visitParams validates the value of the params member that it has just
// read the name of, reporting an object's members to visit, and returns the
// value; false means a syntax error.
func visitParams(it *jsonscan.Checked, visit Visitor) ([]byte, bool) {
	p, isObject := it.Enter()
	if !isObject {
		return it.Value()
	}
	visit(ParamsStart, nil, false, nil)
	var m, mm jsonscan.Member
	for p.NextKey(&m) {
		if string(memberKey(&m)) == "_meta" {
			if meta, isObject := p.Enter(); isObject {
				for meta.Next(&mm) {
					visit(MetaMember, mm.Key, mm.Escaped, mm.Value)
				}
				m.Value, _ = p.Leave(&meta)
			} else {
				m.Value, _ = p.Value()
			}
		} else {
			m.Value, _ = p.Value()
		}
		if m.Value == nil {
			break // a syntax error: the walk is invalid
		}
		visit(ParamsMember, m.Key, m.Escaped, m.Value)
	}
	return it.Leave(&p)
}

func parseError(data []byte) *Error {
	if jsonscan.TooDeep(data) {
		return &Error{Code: CodeParseError, Message: "Parse error: the message nests deeper than " + strconv.Itoa(jsonscan.MaxDepth) + " levels"}
	}
	return &Error{Code: CodeParseError, Message: "Parse error: the message is not valid JSON"}
}

// methodName decodes a method string, returning the constant string for the
// methods MCP defines so that the common case does not allocate.
func methodName(v []byte) (string, bool) {
	raw, ok := jsonscan.StringBytes(v)
	if !ok {
		return "", false
	}
	switch string(raw) {
	case "server/discover":
		return "server/discover", true
	case "tools/call":
		return "tools/call", true
	case "tools/list":
		return "tools/list", true
	case "resources/list":
		return "resources/list", true
	case "resources/read":
		return "resources/read", true
	case "resources/templates/list":
		return "resources/templates/list", true
	case "prompts/list":
		return "prompts/list", true
	case "prompts/get":
		return "prompts/get", true
	case "completion/complete":
		return "completion/complete", true
	case "subscriptions/listen":
		return "subscriptions/listen", true
	case "notifications/cancelled":
		return "notifications/cancelled", true
	case "initialize":
		return "initialize", true
	case "notifications/initialized":
		return "notifications/initialized", true
	case "ping":
		return "ping", true
	}
	return jsonscan.String(v)
}
