package mcp

import (
	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// decodeVisit is jsonrpc.Decode, reporting the members of the params
// object (and of its _meta) to visit in the same validating pass; see
// wire.Decode. The HTTP transport reads _meta this way.
func decodeVisit(data []byte, visit wire.Visitor) (jsonrpc.Message, *jsonrpc.Error) {
	m, err := wire.Decode(data, visit)
	id, _ := jsonrpc.RawID(m.ID)
	msg := jsonrpc.Message{ID: id, Method: m.Method, Params: m.Params, Result: m.Result, Error: (*jsonrpc.Error)(m.Error)}
	if err != nil {
		return msg, (*jsonrpc.Error)(err)
	}
	return msg, nil
}
