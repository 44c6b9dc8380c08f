package client

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Conn carries JSON-RPC messages to one server over one transport. It sends
// requests exactly as given: it adds no _meta and no MCP headers (Session
// does). A Conn is safe for concurrent use.
type Conn interface {
	// RoundTrip sends req as a request with a fresh id and waits for the
	// response. It returns a Reply whenever anything came back, also an
	// HTTP error or a body that is not JSON-RPC; it returns an error only
	// when nothing did: a *TransportError, ErrTimeout (ctx expired) or
	// ErrClosed.
	RoundTrip(ctx context.Context, req *Request) (*Reply, error)
	// Notify sends req as a notification. On HTTP the Reply holds the
	// status; on stdio it is empty.
	Notify(ctx context.Context, req *Request) (*Reply, error)
	// Transport names the transport: protocol.TransportStreamableHTTP,
	// protocol.TransportSSE or protocol.TransportStdio.
	Transport() string
	// Close ends the connection (on stdio: closes the server's stdin and
	// waits for it to exit, killing it after a grace period).
	Close() error
}

// ids hands out request ids: increasing integers, unique per connection.
type ids struct{ n atomic.Int64 }

func (g *ids) next() jsonrpc.ID { return jsonrpc.IntID(g.n.Add(1)) }

// ctxErr maps a context error to ErrTimeout (deadline) or itself
// (cancellation by the caller).
func ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrTimeout
	}
	return ctx.Err()
}

// mux matches responses that arrive on a shared channel (stdio, the
// HTTP+SSE event stream) to the requests waiting for them.
type mux struct {
	mu      sync.Mutex
	pending map[string]chan arrival
	notes   [][]byte // notifications since the last response
	done    chan struct{}
	err     error // why the channel ended
}

type arrival struct {
	err  error // set instead of msg: the wait fails
	msg  *jsonrpc.Message
	raw  []byte
	at   time.Time
	note [][]byte
}

func newMux() *mux {
	return &mux{pending: map[string]chan arrival{}, done: make(chan struct{})}
}

func (m *mux) register(id jsonrpc.ID) (chan arrival, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	ch := make(chan arrival, 1)
	m.pending[string(id.Raw())] = ch
	return ch, nil
}

func (m *mux) forget(id jsonrpc.ID) {
	m.mu.Lock()
	delete(m.pending, string(id.Raw()))
	m.mu.Unlock()
}

// deliver hands a response to its waiter. A response with a null id (an
// error the server could not attribute) goes to the only waiter, if there
// is exactly one.
func (m *mux) deliver(msg *jsonrpc.Message, raw []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := string(msg.ID.Raw())
	ch, ok := m.pending[key]
	if !ok && !msg.ID.IsValid() && len(m.pending) == 1 {
		for k, c := range m.pending {
			key, ch, ok = k, c, true
		}
	}
	if !ok {
		return // a late or unsolicited response
	}
	delete(m.pending, key)
	ch <- arrival{msg: msg, raw: raw, at: time.Now(), note: m.notes}
	m.notes = nil
}

// failPending ends every current wait with err; later requests go on.
func (m *mux) failPending(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, ch := range m.pending {
		delete(m.pending, k)
		ch <- arrival{err: err, at: time.Now()}
	}
}

func (m *mux) note(raw []byte) {
	m.mu.Lock()
	if len(m.notes) < 1000 {
		m.notes = append(m.notes, raw)
	}
	m.mu.Unlock()
}

// fail ends the channel: current and later waiters get err.
func (m *mux) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return
	}
	m.err = err
	close(m.done)
}

// wait waits for the response to id.
func (m *mux) wait(ctx context.Context, id jsonrpc.ID, ch chan arrival, start time.Time) (*Reply, error) {
	select {
	case a := <-ch:
		if a.err != nil {
			return nil, a.err
		}
		return &Reply{Body: a.raw, Msg: a.msg, Notifications: a.note, Latency: a.at.Sub(start)}, nil
	case <-m.done:
		// The response may have arrived just before the channel ended.
		select {
		case a := <-ch:
			if a.err != nil {
				return nil, a.err
			}
			return &Reply{Body: a.raw, Msg: a.msg, Notifications: a.note, Latency: a.at.Sub(start)}, nil
		default:
		}
		m.forget(id)
		return nil, m.err
	case <-ctx.Done():
		m.forget(id)
		return nil, ctxErr(ctx)
	}
}

// answerServerRequest builds the reply to a request the server sent (legacy
// servers may ping): ping gets an empty result, anything else -32601.
func answerServerRequest(msg *jsonrpc.Message) []byte {
	if msg.Method == "ping" {
		return jsonrpc.AppendResult(nil, msg.ID, []byte("{}"))
	}
	return jsonrpc.AppendError(nil, msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + strconv.Quote(msg.Method) + " (this client answers no server requests)"})
}
