package mcp

// The bridge between the two eras' ways of asking the client for input. A
// handler asks once, through the input API of its request (mrtr.go); a
// modern client gets an input_required result and retries, while a legacy
// client gets real elicitation/create, sampling/createMessage or roots/list
// requests over its session, and the handler is re-invoked with the
// answers as inputResponses.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// legacyInvoke runs a method handler for a legacy exchange.
func (s *Server) legacyInvoke(ctx context.Context, x *exchange, h methodHandler, dst []byte) ([]byte, error) {
	return x.run(ctx, h, dst)
}

// sessionNotifier is a Notifier that knows the legacy session of its
// request: the SSE stream of an HTTP session's request, a stdio
// connection's notifier, or withSession's wrapper. It keeps the session
// out of the exchange, whose size the modern hot path pays for.
type sessionNotifier interface {
	Notifier
	legacySession() *session
}

// withSession returns n, or n wrapped so that it carries ss.
func withSession(n Notifier, ss *session) Notifier {
	if sn, ok := n.(sessionNotifier); ok && sn.legacySession() == ss {
		return n
	}
	return &sessionWrapper{n: n, ss: ss}
}

type sessionWrapper struct {
	n  Notifier
	ss *session
}

func (w *sessionWrapper) Notify(msg []byte) {
	if w.n != nil {
		w.n.Notify(msg)
	}
}

func (w *sessionWrapper) legacySession() *session { return w.ss }

func (st *sseStream) legacySession() *session { return st.sess }

func (n stdioNotifier) legacySession() *session { return n.sess }

// session returns the legacy session of the exchange, or nil for a modern
// request.
func (x *exchange) session() *session {
	if x.info.Era != EraLegacy {
		return nil
	}
	if sn, ok := x.notifier.(sessionNotifier); ok {
		return sn.legacySession()
	}
	return nil
}

// legacyInput is an input request to put to a legacy client as a real
// server-to-client request.
type legacyInput struct {
	key    string
	method string // elicitation/create, sampling/createMessage or roots/list
	params []byte
}

// askClient sends the input requests of a round to the legacy client of x,
// all at once, and returns the client's results by key. The first failure
// (an error response, the timeout, cancellation, the end of the session)
// cancels the other requests and is returned.
func (x *exchange) askClient(ctx context.Context, reqs []legacyInput) (map[string]json.RawMessage, error) {
	ss := x.session()
	if ss == nil {
		return nil, errNoLegacySession
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type reply struct {
		key string
		raw json.RawMessage
		err error
	}
	ch := make(chan reply, len(reqs))
	for _, r := range reqs {
		go func() {
			raw, err := ss.call(ctx, x.sendToClient, r.method, r.params)
			ch <- reply{r.key, raw, err}
		}()
	}
	out := make(map[string]json.RawMessage, len(reqs))
	var first error
	for range reqs {
		r := <-ch
		if r.err != nil {
			if first == nil {
				first = r.err
				cancel()
			}
			continue
		}
		out[r.key] = r.raw
	}
	if first != nil {
		return nil, first
	}
	return out, nil
}

var errNoLegacySession = errors.New("mcp: not a legacy session")

// sendToClient sends a server-to-client message that relates to the
// exchange's request: on the request's own SSE stream (as the 2025-11-25
// transport allows), or on the session's standalone GET stream when the
// request's response cannot become a stream; on stdio as a line.
func (x *exchange) sendToClient(msg []byte) {
	x.mu.Lock()
	done := x.done
	x.mu.Unlock()
	if done {
		return
	}
	if st, ok := x.notifier.(*sseStream); ok {
		if !st.sendRequest(msg) {
			st.sess.sendServerMessage(msg)
		}
		return
	}
	if x.notifier != nil {
		x.notifier.Notify(msg)
	}
}

// withInputResponses returns params with inputResponses set to answers
// and requestState to state (omitted when empty), replacing any the
// client sent: how a legacy request is re-invoked after the server asked
// its client for input.
func withInputResponses(params []byte, answers map[string]json.RawMessage, state string) []byte {
	out := []byte{'{'}
	n := 0
	if it, ok := jsonscan.Object(params); ok {
		var m jsonscan.Member
		for it.Next(&m) {
			if m.KeyIs("inputResponses") || m.KeyIs("requestState") {
				continue
			}
			if n > 0 {
				out = append(out, ',')
			}
			out = append(out, '"')
			out = append(out, m.Key...)
			out = append(out, `":`...)
			out = append(out, m.Value...)
			n++
		}
	}
	if n > 0 {
		out = append(out, ',')
	}
	out = append(out, `"inputResponses":{`...)
	keys := make([]string, 0, len(answers))
	for k := range answers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = jsonrpc.AppendString(out, k)
		out = append(out, ':')
		out = append(out, answers[k]...)
	}
	out = append(out, '}')
	if state != "" {
		out = append(out, `,"requestState":`...)
		out = jsonrpc.AppendString(out, state)
	}
	return append(out, '}')
}
