package client

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/jsonrpc"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// Handler receives what a server sends besides responses: notifications
// that no request's OnNotify took, and requests (a legacy server's
// elicitation/create, sampling/createMessage, roots/list and ping).
type Handler struct {
	// Notify gets a notification; raw is the whole message and is owned
	// by the callee.
	Notify func(raw []byte, m *jsonrpc.Message)
	// Request answers a server request with a complete JSON-RPC response
	// message. It runs on a goroutine of its own. Nil answers ping and
	// refuses anything else with -32601.
	Request func(ctx context.Context, m *jsonrpc.Message) []byte
}

// handlerSlot holds a connection's Handler.
type handlerSlot struct{ h atomic.Pointer[Handler] }

// SetHandler installs h for the connection's later messages.
func (s *handlerSlot) SetHandler(h *Handler) { s.h.Store(h) }

func (s *handlerSlot) notify(req *Request, raw []byte, m *jsonrpc.Message) {
	if req != nil && req.OnNotify != nil {
		req.OnNotify(raw, m)
		return
	}
	if h := s.h.Load(); h != nil && h.Notify != nil {
		h.Notify(raw, m)
	}
}

func (s *handlerSlot) answer(ctx context.Context, m *jsonrpc.Message) []byte {
	if h := s.h.Load(); h != nil && h.Request != nil {
		if b := h.Request(ctx, m); b != nil {
			return b
		}
	}
	return answerServerRequest(m)
}

// Handled is implemented by every Conn of this package: SetHandler
// installs the Handler for messages that are not responses.
type Handled interface {
	SetHandler(h *Handler)
}

// cancelledParams is the notifications/cancelled params for id.
func cancelledParams(id jsonrpc.ID, reason string) json.RawMessage {
	b := []byte(`{"requestId":`)
	b = append(b, id.Raw()...)
	b = append(b, `,"reason":`...)
	b = wire.AppendString(b, reason)
	return append(b, '}')
}
