package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Provide implements mcp.Provider: it forwards a request to a backend
// session. Lists and completions go straight through; tools/call,
// prompts/get and resources/read become held calls whose backend requests
// the caller answers in input_required rounds.
func (b *Bridge) Provide(ctx context.Context, req *mcp.MethodRequest) (*mcp.ProvidedResult, error) {
	params, err := forwardParams(req.Params)
	if err != nil {
		return nil, err
	}
	if b.modern.Load() {
		return b.provideModern(ctx, req, params)
	}
	switch req.Method {
	case "tools/call", "prompts/get", "resources/read":
		return b.call(ctx, req, params)
	}
	key, caps, err := b.route(req.Info)
	if err != nil {
		return nil, err
	}
	s, err := b.pool.acquire(ctx, key, caps, false)
	if err != nil {
		return nil, err
	}
	defer b.pool.release(s)
	raw, err := s.c.Call(ctx, req.Method, params)
	if err != nil {
		return nil, b.backendError(ctx, s, err)
	}
	res := &mcp.ProvidedResult{Body: raw}
	if req.Method != "completion/complete" {
		res.Cache = &mcp.CacheHint{}
		if key != emptyKey {
			// The backend may list by the caller's capabilities, or the
			// list comes from the caller's own backend (IsolatePrincipal).
			res.Cache.Scope = mcp.CachePrivate
		}
	}
	return res, nil
}

// emptyKey is the key of a caller without capabilities a backend can see.
const emptyKey = "{}"

// forwardParams returns the params to send to the backend: the caller's,
// without _meta (the backend's client adds its own) and the members of the
// front's input_required rounds.
func forwardParams(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return json.RawMessage("{}"), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, mcp.InvalidParams("Invalid params: params must be an object")
	}
	delete(m, "_meta")
	delete(m, "inputResponses")
	delete(m, "requestState")
	out, err := json.Marshal(m)
	return out, err
}

// heldState is what the bridge seals into a call's requestState: the
// replica that holds the backend call, and the call.
type heldState struct {
	Owner string `json:"o"`
	ID    string `json:"h"`
	URL   string `json:"u,omitempty"` // the owner's AdvertiseURL
}

// heldCall is one backend call of tools/call, prompts/get or
// resources/read, which may outlive the front request that started it
// while it waits for the caller's answers to its backend requests.
type heldCall struct {
	id     string
	method string
	s      *session
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	res    json.RawMessage
	err    error

	// front is the front request of the current round: it gets the
	// call's progress and log messages.
	front atomic.Pointer[mcp.MethodRequest]
	wake  chan struct{} // a backend request arrived

	task string // the front task the call runs in, while held; "" for none

	mu    sync.Mutex
	asks  []*pendingAsk          // arrived, not yet sent to the caller
	sent  map[string]*pendingAsk // sent under their keys, waiting for the retry
	next  int                    // the last key number
	used  map[string]bool        // every key given out in this call
	timer *time.Timer            // the hold timeout, while held
}

type pendingAsk struct {
	method string
	params json.RawMessage
	reply  chan askReply
}

type askReply struct {
	raw json.RawMessage
	err error
}

// ask queues a backend input request for the caller and waits for its
// answer.
func (h *heldCall) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	a := &pendingAsk{method: method, params: append(json.RawMessage(nil), params...), reply: make(chan askReply, 1)}
	h.mu.Lock()
	h.asks = append(h.asks, a)
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
	select {
	case r := <-a.reply:
		return r.raw, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-h.ctx.Done():
		return nil, &mcp.Error{Code: jsonrpc.CodeInternalError, Message: "Request cancelled: the caller did not answer in time"}
	}
}

// keyFor picks the key of a backend request: the one an mcpkit backend
// names in _meta (mcp.MetaInputKey), else r1, r2, ... Keys are unique
// within the call. Callers hold h.mu.
func (h *heldCall) keyFor(a *pendingAsk) string {
	key := a.meta().Key
	for key == "" || h.used[key] {
		h.next++
		key = "r" + strconv.Itoa(h.next)
	}
	h.used[key] = true
	return key
}

func (h *heldCall) progress(p client.Progress) {
	if r := h.front.Load(); r != nil {
		r.Progress(p.Progress, p.Total, p.Message)
	}
}

func (h *heldCall) log(m *client.LogMessage) {
	if r := h.front.Load(); r != nil {
		r.Log(m.Level, m.Logger, m.Data)
	}
}

// call serves one round of a method that may answer input_required.
func (b *Bridge) call(ctx context.Context, req *mcp.MethodRequest, params json.RawMessage) (*mcp.ProvidedResult, error) {
	var st heldState
	resumed, err := req.LoadState(&st)
	if err != nil {
		return nil, err
	}
	var h *heldCall
	if resumed {
		if h = b.held.take(st.ID); h == nil {
			if st.Owner != b.id && st.URL != "" {
				return b.forward(ctx, req, st.Owner, st.URL)
			}
			if st.Owner != b.id {
				return nil, &mcp.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the call is held by bridge replica " + st.Owner + ", which this replica cannot reach; it was not run again"}
			}
			return nil, &mcp.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the held call ended (its hold timed out or it was cancelled); it was not run again"}
		}
		var irs []error
		h.mu.Lock()
		for key, a := range h.sent {
			raw, err := req.RequestInput(key, a.method, a.params)
			if err != nil {
				irs = append(irs, err)
				continue
			}
			a.reply <- askReply{raw: raw}
			delete(h.sent, key)
		}
		h.mu.Unlock()
		if len(irs) > 0 {
			// Not every backend request was answered: ask again.
			if err := req.SaveState(&st); err != nil {
				return nil, err
			}
			h.task = req.TaskID()
			b.held.put(h, b.opts.HoldTimeout, b.abandon)
			return nil, errors.Join(irs...)
		}
	} else {
		key, caps, err := b.route(req.Info)
		if err != nil {
			return nil, err
		}
		exclusive := caps.Sampling != nil || caps.Elicitation != nil || caps.Roots != nil || req.Info.LogLevel != ""
		s, err := b.pool.acquire(ctx, key, caps, exclusive)
		if err != nil {
			return nil, err
		}
		if err := b.checkHeaders(ctx, req, s, key, params); err != nil {
			b.pool.release(s)
			return nil, err
		}
		if !exclusive {
			// A caller that cannot be asked for input and wants no logs:
			// the call cannot be held, so it runs in this goroutine.
			return b.direct(ctx, req, s, params)
		}
		h = b.start(ctx, s, exclusive, req, params)
	}
	return b.wait(ctx, req, h)
}

// direct runs a call on a shared session in the caller's goroutine: its
// progress goes straight to req, and ctx's end cancels the backend call.
func (b *Bridge) direct(ctx context.Context, req *mcp.MethodRequest, s *session, params json.RawMessage) (*mcp.ProvidedResult, error) {
	defer b.pool.release(s)
	raw, err := s.c.Call(ctx, req.Method, params, client.WithProgress(func(p client.Progress) { req.Progress(p.Progress, p.Total, p.Message) }))
	if err != nil {
		return nil, b.backendError(ctx, s, err)
	}
	res := &mcp.ProvidedResult{Body: raw}
	if req.Method == "resources/read" {
		res.Cache = &mcp.CacheHint{} // read results carry hints, as the core's do
	}
	return res, nil
}

// start begins the backend call of h on session s. The call may outlive
// ctx, the front request's context: it keeps ctx's values (the caller's
// trace, for Options.Interceptors) but not its end.
func (b *Bridge) start(ctx context.Context, s *session, exclusive bool, req *mcp.MethodRequest, params json.RawMessage) *heldCall {
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h := &heldCall{id: newID(), method: req.Method, s: s, ctx: hctx, cancel: cancel, done: make(chan struct{}), wake: make(chan struct{}, 1), sent: map[string]*pendingAsk{}, used: map[string]bool{}}
	if exclusive {
		s.mu.Lock()
		s.cur = h
		s.mu.Unlock()
	}
	opts := []client.CallOption{client.WithProgress(h.progress)}
	if lvl := req.Info.LogLevel; lvl != "" {
		opts = append(opts, client.WithLogLevel(lvl), client.WithLog(h.log))
	}
	method := req.Method
	h.front.Store(req) // before the call: its first progress and logs may come at once
	go func() {
		defer close(h.done)
		h.res, h.err = s.c.Call(hctx, method, params, opts...)
	}()
	return h
}

// wait waits for the backend call's outcome, or for its requests for
// input, which it turns into one input_required result.
func (b *Bridge) wait(ctx context.Context, req *mcp.MethodRequest, h *heldCall) (*mcp.ProvidedResult, error) {
	h.front.Store(req)
	defer h.front.Store(nil)
	for {
		select {
		case <-h.done:
			return b.finish(ctx, h)
		case <-ctx.Done():
			h.cancel() // the client sends notifications/cancelled
			<-h.done
			b.finish(ctx, h)
			return nil, ctx.Err()
		case <-h.wake:
		}
		b.gather(h)
		b.beforeInput(req)
		h.mu.Lock()
		asks := h.asks
		h.asks = nil
		var irs []error
		for _, a := range asks {
			key := h.keyFor(a)
			_, err := req.RequestInput(key, a.method, a.params)
			var ir *mcp.InputRequired
			if errors.As(err, &ir) {
				h.sent[key] = a
				irs = append(irs, err)
				continue
			}
			// The caller cannot be asked (it did not declare the
			// capability): the backend gets the error.
			if err == nil {
				err = errNoCaller
			}
			a.reply <- askReply{err: err}
		}
		h.mu.Unlock()
		if len(irs) == 0 {
			continue
		}
		if err := req.SaveState(&heldState{Owner: b.id, ID: h.id, URL: b.opts.AdvertiseURL}); err != nil {
			return nil, err
		}
		h.task = req.TaskID()
		b.held.put(h, b.opts.HoldTimeout, b.abandon)
		return nil, errors.Join(irs...)
	}
}

// gather waits until the requests a backend sends together have arrived,
// so that they go into one input_required result: until every key of the
// round an mcpkit backend names (mcp.MetaInputRound) is there, else until
// no request has arrived for Gather; at most ten times Gather in all, and
// never past the end of the call.
func (b *Bridge) gather(h *heldCall) {
	quiet := time.NewTimer(b.opts.Gather)
	defer quiet.Stop()
	limit := time.NewTimer(10 * b.opts.Gather)
	defer limit.Stop()
	for {
		if h.roundComplete() {
			return
		}
		select {
		case <-quiet.C:
			if !h.roundAnnounced() {
				return
			}
		case <-limit.C:
			return
		case <-h.done:
			return
		case <-h.wake:
			quiet.Reset(b.opts.Gather)
		}
	}
}

// askMeta is what an mcpkit backend says about a request in its _meta.
type askMeta struct {
	Key   string   `json:"io.github.mcpkit/inputKey"`
	Round []string `json:"io.github.mcpkit/inputRound"`
}

func (a *pendingAsk) meta() askMeta {
	var p struct {
		Meta askMeta `json:"_meta"`
	}
	json.Unmarshal(a.params, &p)
	return p.Meta
}

// roundAnnounced reports whether a waiting request names its round.
func (h *heldCall) roundAnnounced() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, a := range h.asks {
		if len(a.meta().Round) > 0 {
			return true
		}
	}
	return false
}

// roundComplete reports whether the waiting requests name a round and
// every key of it is there.
func (h *heldCall) roundComplete() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	var round []string
	have := map[string]bool{}
	for _, a := range h.asks {
		m := a.meta()
		have[m.Key] = true
		if len(m.Round) > 0 {
			round = m.Round
		}
	}
	if round == nil {
		return false
	}
	for _, k := range round {
		if !have[k] {
			return false
		}
	}
	return true
}

// finish releases h's session and maps the backend call's outcome.
func (b *Bridge) finish(ctx context.Context, h *heldCall) (*mcp.ProvidedResult, error) {
	h.s.mu.Lock()
	if h.s.cur == h {
		h.s.cur = nil
	}
	h.s.mu.Unlock()
	h.cancel()
	var err error
	if h.err != nil {
		err = b.backendError(ctx, h.s, h.err)
	}
	b.pool.release(h.s)
	if err != nil {
		return nil, err
	}
	res := &mcp.ProvidedResult{Body: h.res}
	if h.method == "resources/read" {
		res.Cache = &mcp.CacheHint{} // read results carry hints, as the core's do
	}
	return res, nil
}

// abandon ends a held call whose retry did not come in time.
func (b *Bridge) abandon(h *heldCall) {
	h.cancel()
	<-h.done
	b.finish(context.Background(), h)
}

// backendError maps the error of a backend call for the caller: the
// backend's own JSON-RPC error as it is; a backend that ended, -32603 with
// its exit status (never its stderr, which goes to the log).
func (b *Bridge) backendError(ctx context.Context, s *session, err error) error {
	var me *mcp.Error
	if errors.As(err, &me) {
		if me.Code == mcp.CodeResourceNotFound {
			// The legacy code: the front speaks each era's own (-32602 at
			// 2026-07-28, and -32002 again to a legacy caller).
			var d struct {
				URI string `json:"uri"`
			}
			if raw, ok := me.Data.(json.RawMessage); ok {
				json.Unmarshal(raw, &d)
			}
			return mcp.ResourceNotFound(d.URI)
		}
		return &mcp.Error{Code: me.Code, Message: me.Message, Data: me.Data}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	ended := errors.Is(err, client.ErrClosed) || errors.As(err, new(*client.TransportError))
	select {
	case <-s.done:
		ended = true
	default:
	}
	if ended {
		b.pool.markDead(s)
		s.c.Close() // reaps the process, for its exit status
		if s.hung.Load() {
			return &mcp.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the backend was ended during the call: " + b.hungReason()}
		}
		reason := exitReason(s.c)
		b.log.Warn("bridge: a backend session ended during a call", "exit", reason, "err", err)
		return &mcp.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the backend exited during the call (" + reason + ")"}
	}
	b.log.Error("bridge: backend call failed", "err", err)
	return &mcp.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the backend's answer could not be relayed"}
}

// heldCalls are the calls held on this replica, waiting for their retry.
type heldCalls struct {
	mu     sync.Mutex
	m      map[string]*heldCall
	byTask map[string]string // front task id -> held call id, for tasks/cancel
}

// put holds h until take, or until timeout passes; then abandon runs.
func (t *heldCalls) put(h *heldCall, timeout time.Duration, abandon func(*heldCall)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]*heldCall{}
	}
	t.m[h.id] = h
	if h.task != "" {
		if t.byTask == nil {
			t.byTask = map[string]string{}
		}
		t.byTask[h.task] = h.id
	}
	h.timer = time.AfterFunc(timeout, func() {
		if t.take(h.id) != nil {
			abandon(h)
		}
	})
}

// take removes and returns the held call id, or nil.
func (t *heldCalls) take(id string) *heldCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.m[id]
	if h == nil {
		return nil
	}
	delete(t.m, id)
	if h.task != "" {
		delete(t.byTask, h.task)
	}
	h.timer.Stop()
	return h
}

// takeTask removes and returns the call held for front task id, or nil.
func (t *heldCalls) takeTask(id string) *heldCall {
	t.mu.Lock()
	hid, ok := t.byTask[id]
	t.mu.Unlock()
	if !ok {
		return nil
	}
	return t.take(hid)
}

// cancelAll cancels every held call (Close).
func (t *heldCalls) cancelAll() {
	t.mu.Lock()
	all := t.m
	t.m, t.byTask = nil, nil
	t.mu.Unlock()
	for _, h := range all {
		h.timer.Stop()
		h.cancel()
	}
}

// newID returns a random identifier.
func newID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
