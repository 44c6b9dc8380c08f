// Package jsonrpc holds the JSON-RPC 2.0 wire types that MCP messages travel
// in: request identifiers, decoded messages, error objects, and the encoders
// that write responses and notifications as single-line JSON.
//
// The decoder is strict in the ways MCP requires (an id is a string or an
// integer and never null; batches are rejected) and allocation-free for the
// envelope: a decoded Message refers to slices of the input buffer, so the
// buffer must outlive the Message.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// Version is the only JSON-RPC version MCP speaks.
const Version = "2.0"

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// ID is a JSON-RPC request identifier: a JSON string or integer, kept as its
// raw encoded bytes so that it is echoed back exactly as the client sent it.
// The zero ID is "absent" (a notification, or an id that could not be read)
// and encodes as null.
type ID struct {
	raw []byte
}

// StringID returns the ID for the string s.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: b}
}

// RawID returns the ID whose JSON encoding is raw, and whether raw is a
// string or an integer (anything else, null included, gives the zero ID
// and false). The ID shares raw's memory; see Clone.
func RawID(raw []byte) (ID, bool) {
	if !wire.ValidID(raw) {
		return ID{}, false
	}
	return ID{raw: raw}, true
}

// IntID returns the ID for the integer n.
func IntID(n int64) ID {
	return ID{raw: strconv.AppendInt(nil, n, 10)}
}

// IsValid reports whether the ID is present.
func (id ID) IsValid() bool { return len(id.raw) > 0 }

// Raw returns the ID's JSON encoding, or nil for the zero ID. The caller must
// not modify it.
func (id ID) Raw() []byte { return id.raw }

// IsString reports whether the ID is a JSON string.
func (id ID) IsString() bool { return len(id.raw) > 0 && id.raw[0] == '"' }

// String returns the ID as it appears on the wire (a quoted string, an
// integer, or "null").
func (id ID) String() string {
	if len(id.raw) == 0 {
		return "null"
	}
	return string(id.raw)
}

// Equal reports whether two IDs are the same JSON value.
func (id ID) Equal(other ID) bool {
	if bytes.Equal(id.raw, other.raw) {
		return true
	}
	// Strings may be written with different escapes; compare decoded forms.
	if id.IsString() && other.IsString() {
		var a, b string
		if json.Unmarshal(id.raw, &a) == nil && json.Unmarshal(other.raw, &b) == nil {
			return a == b
		}
	}
	return false
}

// Clone returns an ID that does not share memory with the decoded buffer.
func (id ID) Clone() ID {
	if id.raw == nil {
		return ID{}
	}
	return ID{raw: bytes.Clone(id.raw)}
}

// MarshalJSON implements json.Marshaler.
func (id ID) MarshalJSON() ([]byte, error) {
	if len(id.raw) == 0 {
		return []byte("null"), nil
	}
	return id.raw, nil
}

// UnmarshalJSON implements json.Unmarshaler. It accepts a string or an
// integer; null leaves the ID absent.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*id = ID{}
		return nil
	}
	if !wire.ValidID(b) {
		return &Error{Code: CodeInvalidRequest, Message: "id must be a string or an integer"}
	}
	id.raw = bytes.Clone(b)
	return nil
}

// Error is a JSON-RPC error object. It implements the error interface so
// that it can travel through Go error chains.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error returns the message and the code.
func (e *Error) Error() string {
	return "jsonrpc: " + e.Message + " (" + strconv.Itoa(e.Code) + ")"
}
