package client

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"time"

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
	// message. It runs on a goroutine of its own, at most
	// MaxServerRequests at once per connection, with a context that ends
	// after ServerRequestTimeout. Nil answers ping and refuses anything
	// else with -32601. Ping never reaches it: the connection answers
	// ping itself, at once.
	Request func(ctx context.Context, m *jsonrpc.Message) []byte
}

// MaxServerRequests bounds the requests from a server (a legacy server's
// elicitation/create, sampling/createMessage, roots/list) that one
// connection answers at once; a request over the bound is refused at once
// with error -32000, so a server flooding requests costs the client no
// more than this many goroutines. Ping is answered at once and not
// counted.
const MaxServerRequests = 16

// ServerRequestTimeout bounds the work on one server request, the answer's
// delivery included.
const ServerRequestTimeout = 10 * time.Minute

// CodeTooManyServerRequests is the error code of the answer to a server
// request over MaxServerRequests.
const CodeTooManyServerRequests = -32000

// handlerSlot holds a connection's Handler and bounds its server requests.
type handlerSlot struct {
	h        atomic.Pointer[Handler]
	inflight atomic.Int32
}

// inlineAnswerTimeout bounds an answer that a reader sends itself (ping,
// a refused server request) before it reads on.
const inlineAnswerTimeout = 10 * time.Second

// serveRequest answers the server request m. Ping, and a request over
// MaxServerRequests (refused), are answered in the caller's goroutine (the
// reader's) with now, or with send and a context that ends after
// inlineAnswerTimeout if now is nil; the others each on a goroutine of
// their own, which answers with send under a context derived from ctx
// that ends after ServerRequestTimeout.
func (s *handlerSlot) serveRequest(ctx context.Context, m *jsonrpc.Message, now, send func(ctx context.Context, msg []byte)) {
	if now == nil {
		now = func(ctx context.Context, msg []byte) {
			ctx, cancel := context.WithTimeout(ctx, inlineAnswerTimeout)
			defer cancel()
			send(ctx, msg)
		}
	}
	if m.Method == "ping" {
		now(ctx, answerServerRequest(m))
		return
	}
	if s.inflight.Add(1) > MaxServerRequests {
		s.inflight.Add(-1)
		now(ctx, jsonrpc.AppendError(nil, m.ID, &jsonrpc.Error{Code: CodeTooManyServerRequests, Message: "Too many requests from the server at once: this client answers " + strconv.Itoa(MaxServerRequests) + " at a time"}))
		return
	}
	go func() {
		defer s.inflight.Add(-1)
		actx, cancel := context.WithTimeout(ctx, ServerRequestTimeout)
		defer cancel()
		send(actx, s.answer(actx, m))
	}()
}

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
