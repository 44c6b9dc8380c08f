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
	"net/http"
	"slices"
	"strconv"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/jsonrpc"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// maxLegacyRounds bounds how often a handler may ask a legacy client for
// input within one request (a handler that asks step by step, or asks
// again after an answer that did not fit).
const maxLegacyRounds = 16

// legacyRound is what appendInputRequired returns, as an error, for a
// legacy exchange instead of encoding an input_required result: the input
// requests to put to the client, and the sealed state that carries the
// answers used so far into the next run of the handler.
type legacyRound struct {
	inputs []legacyInput
	state  string
}

func (r *legacyRound) Error() string { return "mcp: input required from a legacy client" }

// legacyRoundOf builds the legacyRound of rd (whose mutex the caller holds)
// with its sealed state.
func legacyRoundOf(rd *round, state string) *legacyRound {
	lr := &legacyRound{state: state, inputs: make([]legacyInput, len(rd.pending))}
	for i, p := range rd.pending {
		lr.inputs[i] = legacyInput{key: p.key, method: inputMethodName(p.method), params: p.params}
	}
	return lr
}

// legacyInvoke runs a method handler for a legacy exchange. When the
// handler needs input from the client, it puts the input requests to the
// client as real requests, waits for the answers, and runs the handler
// again with them, as a modern client's retry would, until the handler
// completes. A failure to get the answers (the client's error, the
// timeout, the end of the session) ends a tools/call with an isError
// result that says what happened, and other methods with -32603.
func (s *Server) legacyInvoke(ctx context.Context, x *exchange, h methodHandler, dst []byte) ([]byte, error) {
	params := x.params
	if hasInputMembers(&x.meta.p, params) {
		// Not part of any legacy revision: a legacy client cannot answer
		// ahead of being asked.
		params = withInputResponses(params, nil, "")
		x.params = params
	}
	for rounds := 1; ; rounds++ {
		out, err := x.run(ctx, h, dst)
		if err == nil {
			return out, nil
		}
		var lr *legacyRound
		if !errors.As(err, &lr) {
			return out, err
		}
		if rounds == maxLegacyRounds {
			return legacyInputFailed(x, dst, errors.New("the handler asked for input more than "+strconv.Itoa(maxLegacyRounds)+" times"))
		}
		var answers map[string]json.RawMessage
		if len(lr.inputs) > 0 {
			if answers, err = x.askClient(ctx, lr.inputs); err != nil {
				return legacyInputFailed(x, dst, err)
			}
		}
		x.params = withInputResponses(params, answers, lr.state)
	}
}

// hasInputMembers reports whether params carry inputResponses or
// requestState; p is where the scan of params found its members.
func hasInputMembers(p *paramSpans, params []byte) bool {
	if _, ok := p.lookup(params, "inputResponses"); ok {
		return true
	}
	_, ok := p.lookup(params, "requestState")
	return ok
}

// legacyInputFailed ends a legacy request whose input could not be had.
func legacyInputFailed(x *exchange, dst []byte, err error) ([]byte, error) {
	x.s.log.Debug("mcp: no input from the legacy client", "method", x.method, "err", logError(err))
	msg := "Could not get the input this request needs from the client: " + err.Error()
	if x.method != "tools/call" {
		return nil, &Error{Code: jsonrpc.CodeInternalError, Message: msg, Err: err}
	}
	body, merr := json.Marshal(errorResult(msg))
	if merr != nil {
		return nil, merr
	}
	return x.appendResult(dst, resultComplete, false, body, nil), nil
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
func (x *exchange) session() *session { return x.era().session(x.notifier) }

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
	keys := make([]string, len(reqs))
	for i, r := range reqs {
		keys[i] = r.key
	}
	for _, r := range reqs {
		go func() {
			raw, err := x.callClient(ctx, ss, r.method, withInputKey(r.params, r.key, keys))
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

// callClient sends one request to the legacy client of x and waits for
// the answer (session.call), inside the interceptors when the server has
// them (PhaseClientRequest).
func (x *exchange) callClient(ctx context.Context, ss *session, method string, params []byte) (json.RawMessage, error) {
	n := ss.nextReq.Add(1)
	if x.s.icpt == nil {
		return ss.callID(ctx, x.sendToClient, n, method, params)
	}
	t := TransportStdio
	if ss.id != "" {
		t = TransportStreamableHTTP
	}
	c := &Call{Method: method, ID: jsonrpc.IntID(n), Info: &x.info, Params: params, Transport: t,
		Phase: PhaseClientRequest, SessionID: ss.id, session: ss}
	var raw json.RawMessage
	var err error
	var inner Outcome
	c.serve = func(ctx context.Context, c *Call) Outcome {
		raw, err = ss.callID(ctx, x.sendToClient, n, method, params)
		inner = Outcome{ResultType: resultComplete, HTTPStatus: http.StatusOK}
		if err != nil {
			e := &Error{Code: jsonrpc.CodeInternalError, Message: err.Error(), Err: err}
			var ce *clientError
			if errors.As(err, &ce) && ce.Code != 0 {
				e.Code = ce.Code
			}
			inner = Outcome{Err: e, HTTPStatus: http.StatusOK}
		}
		return inner
	}
	o, ran := x.s.intercept(ctx, c)
	if o.Err != nil && (!ran || o.Err != inner.Err) {
		return nil, o.Err
	}
	if !ran {
		return nil, &clientError{Method: method, Message: "an interceptor returned without sending the request"}
	}
	return raw, err
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
// (omitted when nil) and requestState to state (omitted when empty),
// replacing any the client sent: how a legacy request is re-invoked after
// the server asked its client for input.
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
	if answers == nil {
		if state != "" {
			if n > 0 {
				out = append(out, ',')
			}
			out = append(out, `"requestState":`...)
			out = wire.AppendString(out, state)
		}
		return append(out, '}')
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
		out = wire.AppendString(out, k)
		out = append(out, ':')
		out = append(out, answers[k]...)
	}
	out = append(out, '}')
	if state != "" {
		out = append(out, `,"requestState":`...)
		out = wire.AppendString(out, state)
	}
	return append(out, '}')
}

// MetaInputKey is the _meta member of a server-to-client request (to a
// legacy client) that names the key of the input request it stands for, so
// that a bridge in front of this server can keep the handler's keys in its
// own input_required results. MetaInputRound lists the keys of every
// request of the same round, sent together, so that the bridge can wait
// for all of them.
const (
	MetaInputKey   = "io.github.mcpkit/inputKey"
	MetaInputRound = "io.github.mcpkit/inputRound"
)

// withInputKey returns params with _meta[MetaInputKey] set to key and
// _meta[MetaInputRound] to round.
func withInputKey(params []byte, key string, round []string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return params
	}
	var meta map[string]json.RawMessage
	if raw, ok := m["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return params
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[MetaInputKey] = mustMarshal(key)
	meta[MetaInputRound] = mustMarshal(round)
	m["_meta"] = mustMarshal(meta)
	return mustMarshal(m)
}
