package jsonrpc

import (
	"encoding/json"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// Message is one decoded JSON-RPC message: a request (Method and ID), a
// notification (Method, no ID), or a response (ID with Result or Error).
// Its byte slices point into the buffer given to Decode.
type Message struct {
	ID     ID
	Method string
	// Params is the raw params value, or nil when absent.
	Params json.RawMessage
	// Result and Error are set on responses only.
	Result json.RawMessage
	Error  *Error
}

// IsRequest reports whether m is a request (it expects a response).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID.IsValid() }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && !m.ID.IsValid() }

// IsResponse reports whether m is a response to a request the receiver sent.
func (m *Message) IsResponse() bool { return m.Method == "" }

// Decode parses one JSON-RPC message. On failure it returns an *Error with
// CodeParseError (not JSON) or CodeInvalidRequest (JSON, but not a valid
// single JSON-RPC message), and the returned Message carries the request id
// when it could be read so that the error response can echo it.
//
// The decoder is strict in the ways MCP requires: an id is a string or an
// integer and never null on a request, params is an object, batches are
// refused, and nesting is bounded. It does not allocate for the envelope of
// a request whose method is one of the methods MCP defines. The Message
// refers to data; data must not be modified while the Message is in use.
func Decode(data []byte) (Message, *Error) {
	m, err := wire.Decode(data, nil)
	msg := Message{ID: ID{raw: m.ID}, Method: m.Method, Params: m.Params, Result: m.Result, Error: (*Error)(m.Error)}
	if err != nil {
		return msg, (*Error)(err)
	}
	return msg, nil
}
