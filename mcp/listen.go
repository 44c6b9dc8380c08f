package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/park"
	"github.com/mcpkit/mcpkit/jsonrpc"

	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/internal/wire"
)

// SubscriptionFilter is the set of notification types a subscriptions/listen
// request opts in to, and, in the acknowledgement, the subset the server
// agreed to honour.
type SubscriptionFilter struct {
	ToolsListChanged     bool `json:"toolsListChanged,omitempty"`
	PromptsListChanged   bool `json:"promptsListChanged,omitempty"`
	ResourcesListChanged bool `json:"resourcesListChanged,omitempty"`
	// ResourceSubscriptions lists the resource URIs whose
	// notifications/resources/updated the client wants.
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs lists the tasks whose notifications/tasks (the task as
	// tasks/get reports it, at every change) the client wants; asking
	// needs the tasks extension. The acknowledgement lists those that
	// exist and the caller may see.
	TaskIDs []string `json:"taskIds,omitempty"`
}

const (
	// methodListen is the method that opens a listen stream.
	methodListen = "subscriptions/listen"
	// defaultMaxSubscriptions is ServerOptions.Listen.MaxSubscriptions' default.
	defaultMaxSubscriptions = 10000
	// listenBuffer is how many changes may wait for one listen stream.
	// A stream whose client reads so slowly that more pile up is dropped,
	// so that it never holds up delivery to the others.
	listenBuffer = 32
	// deliverBatch is how many parked streams deliver hands to the
	// writers at once.
	deliverBatch = 256
	// maxListenURIs bounds resourceSubscriptions of one listen request.
	maxListenURIs = 1000
	// maxListenURIBytes bounds the length of one URI in
	// resourceSubscriptions, and maxListenURIsBytes their total length:
	// an idle stream has no timeout, so these bound what it holds.
	maxListenURIBytes  = 2048
	maxListenURIsBytes = 64 << 10
)

// errNoResponse makes Handle answer nothing: the transport ends the
// response without a JSON-RPC response (an abrupt end of a listen stream,
// which tells the client to reconnect).
var errNoResponse = errors.New("mcp: no response")

// errParkedComplete and errParkedGone end the handler of a parked stream
// on a server with interceptors (which wait for the stream to end): like
// errNoResponse they answer nothing (the stream's writes happened
// elsewhere), and they tell the interceptors how the stream ended: with
// its completion result, or because the client went away.
var (
	errParkedComplete = errors.New("mcp: the parked stream completed")
	errParkedGone     = errors.New("mcp: the parked stream's client went away")
)

// parkedEnd returns the error that ends the handler of a parked stream
// that has ended.
func parkedEnd(ps *parkedStream) error {
	switch {
	case ps.completed:
		return errParkedComplete
	case errors.Is(ps.endErr, errPeerClosed):
		return errParkedGone
	}
	return errNoResponse
}

// noResponse reports whether err makes Handle answer nothing.
func noResponse(err error) bool {
	return err == errNoResponse || err == errParkedComplete || err == errParkedGone
}

// errShuttingDown answers listen requests that arrive during Shutdown.
var errShuttingDown = &Error{Code: jsonrpc.CodeInternalError, Message: "Server shutting down: subscriptions/listen is no longer accepted; retry on another replica", status: http.StatusServiceUnavailable}

// listeners is a Server's set of open subscriptions/listen streams.
type listeners struct {
	s   *Server
	max int // < 0: listen is off

	busOnce sync.Once
	unsub   func() // set once by busOnce; called by Shutdown
	// observe is ListenOptions.Observe.
	observe func(ctx context.Context, info *RequestInfo, granted SubscriptionFilter) (func(), error)

	mu      sync.Mutex              // guards subs, closed, parked and ticking
	subs    map[*subscription]uint8 // each with its keep-alive slice (park.go)
	closed  bool
	parked  int  // streams written by writers (park.go)
	ticking bool // keepAliveLoop runs
	// opened counts the streams opened, to spread them over slices.
	opened uint8
	// pinged is the keep-alive slice keepAliveLoop pinged last.
	pinged  uint8
	wg      sync.WaitGroup
	writers parkWriters
	hangups park.Watch
	// writeTimeout bounds a write to a parked stream (parkedWriteTimeout;
	// tests change it), and stalled counts the parked streams whose write
	// waits for the client, each on a goroutine of its own (park.go).
	writeTimeout time.Duration
	stalled      atomic.Int32
	// due is deliver's buffer of parked streams to schedule (calls of a
	// Bus subscriber never overlap).
	due []*parkedStream
}

func (l *listeners) init(s *Server, o *ListenOptions) {
	l.s = s
	switch {
	case o.Disable:
		l.max = 0
	case o.MaxSubscriptions < 0: // Off: no cap
		l.max = math.MaxInt
	default:
		l.max = cmp.Or(o.MaxSubscriptions, defaultMaxSubscriptions)
	}
	l.observe = o.Observe
	l.subs = make(map[*subscription]uint8)
	l.writeTimeout = parkedWriteTimeout
}

// enabled reports whether subscriptions/listen is served at all.
func (l *listeners) enabled() bool { return l.max > 0 }

// subscription is one open listen stream. An idle stream costs its
// handler's goroutine and little else: the changes waiting for it are
// queued in pending, allocated when the first one arrives, and wake tells
// the handler that there is something to do. A parked stream (park.go) has
// no handler: a writer takes it instead, when it is scheduled.
type subscription struct {
	id     string              // the JSON-RPC id, for logs
	kinds  uint8               // bit 1<<ChangeKind for every honoured kind
	uris   []string            // honoured resourceSubscriptions, sorted, without repeats
	tasks  map[string]struct{} // honoured taskIds
	wake   chan struct{}       // capacity 1: pending or end changed
	client string              // the client whose quota the stream counts against
	ended  func()              // ListenOptions.Observe's end function; may be nil
	abort  func()              // unblocks a transport write in progress; may be nil; guarded by mu once open

	mu      sync.Mutex
	pending []Change // at most listenBuffer, oldest first
	end     subEnd
	park    *parkedStream // set once the stream is parked
	busy    bool          // parked: a writer has the stream, or will
	ping    bool          // parked: a keep-alive comment is due
	hup     bool          // parked: the client closed its connection
}

// subEnd says why a stream ends, if it does.
type subEnd uint8

const (
	subOpen    subEnd = iota
	subDropped        // the client did not keep up: end without a response
	subClosing        // Shutdown: deliver what waits, then end gracefully
)

func (sub *subscription) wants(c Change) bool {
	if sub.kinds&(1<<c.Kind) == 0 {
		return false
	}
	switch c.Kind {
	case ResourceUpdated:
		_, ok := slices.BinarySearch(sub.uris, c.URI)
		return ok
	case TaskChanged:
		_, ok := sub.tasks[c.TaskID]
		return ok
	}
	return true
}

// signal wakes the stream's handler, unless a wake-up is already waiting.
func (sub *subscription) signal() {
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

// queue adds c to the stream's pending changes unless an equal one waits
// already, or, when listenBuffer different ones already wait, marks the
// stream dropped and reports false. A stream with a handler is woken; a
// parked one that now needs a writer is returned, for the caller to
// schedule.
func (sub *subscription) queue(c Change) (ok bool, due *parkedStream) {
	sub.mu.Lock()
	// A change equal to one still waiting adds nothing: the client will
	// re-read the list, resource or task once either way. Coalescing them
	// keeps a burst of changes from dropping a client that keeps up.
	for _, p := range sub.pending {
		if p == c {
			sub.mu.Unlock()
			return true, nil
		}
	}
	ok = len(sub.pending) < listenBuffer
	if ok {
		sub.pending = append(sub.pending, c)
	} else {
		sub.end = subDropped
	}
	ps := sub.scheduleLocked()
	sub.mu.Unlock()
	if ps == nil {
		sub.signal()
	}
	return ok, ps
}

// next takes the oldest pending change. When none waits it reports false
// and why the stream ends, if it does.
func (sub *subscription) next() (Change, bool, subEnd) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.end == subDropped || len(sub.pending) == 0 {
		return Change{}, false, sub.end
	}
	c := sub.pending[0]
	n := copy(sub.pending, sub.pending[1:])
	sub.pending[n] = Change{}
	sub.pending = sub.pending[:n]
	return c, true, subOpen
}

// wait blocks until the stream has something to do, or ctx is done. It
// is where an idle stream's goroutine waits: a small frame, so that the
// runtime can shrink a stack that setting the stream up had grown.
func (sub *subscription) wait(ctx context.Context) bool {
	select {
	case <-sub.wake:
		return true
	case <-ctx.Done():
		return false
	}
}

// open registers a subscription, or fails when the server is shutting down
// or at its cap.
func (l *listeners) open(sub *subscription) error {
	l.busOnce.Do(func() { l.unsub = l.s.bus.Subscribe(l.deliver) })
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errShuttingDown
	}
	if len(l.subs) >= l.max {
		return &Error{
			Code:    jsonrpc.CodeInternalError,
			Message: "Too many open subscriptions: this server allows " + strconv.Itoa(l.max) + " subscriptions/listen streams at once; retry later",
			Data:    json.RawMessage(`{"maxSubscriptions":` + strconv.Itoa(l.max) + `}`),
			status:  http.StatusServiceUnavailable,
		}
	}
	l.opened++
	l.subs[sub] = keepAliveSlot(l.pinged, l.opened)
	l.wg.Add(1)
	return nil
}

// close unregisters a subscription whose handler is returning.
func (l *listeners) close(sub *subscription) {
	l.mu.Lock()
	delete(l.subs, sub)
	l.mu.Unlock()
	l.s.quota.release(quotaSubscriptions, sub.client)
	sub.observedEnd()
	l.wg.Done()
}

// observedEnd calls the stream's ListenOptions.Observe end function, if
// any. It runs once, when the stream is unregistered.
func (sub *subscription) observedEnd() {
	if sub.ended != nil {
		sub.ended()
	}
}

// count returns the number of open subscriptions.
func (l *listeners) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.subs)
}

// deliver hands c to every subscription that wants it, without ever
// blocking: a subscription with listenBuffer changes already waiting is
// dropped.
//
// Parked streams go to the writers in batches of deliverBatch: the first
// writes start while the rest are being queued, and the writers' queue is
// locked once per batch rather than once per stream.
func (l *listeners) deliver(c Change) {
	var slow []*subscription
	due := l.due[:0]
	l.mu.Lock()
	for sub := range l.subs {
		if !sub.wants(c) {
			continue
		}
		ok, ps := sub.queue(c)
		if !ok {
			slow = append(slow, sub)
			delete(l.subs, sub)
		}
		if ps != nil {
			if due = append(due, ps); len(due) == deliverBatch {
				l.writers.add(due...)
				due = due[:0]
			}
		}
	}
	l.mu.Unlock()
	l.writers.add(due...)
	clear(due)
	l.due = due
	for _, sub := range slow {
		l.s.log.Warn("mcp: dropping a subscriptions/listen stream: its client does not keep up with notifications", "subscriptionId", logField(sub.id), "buffered", listenBuffer)
		sub.mu.Lock()
		ps, abort := sub.park, sub.abort
		sub.mu.Unlock()
		switch {
		case ps != nil:
			ps.conn.SetWriteDeadline(time.Now()) // a write in progress fails
		case abort != nil:
			abort()
		}
	}
}

// gracefulEnder is implemented by Notifiers whose transport ends listen
// streams gracefully on its own (stdio at the end of input).
type gracefulEnder interface{ onGracefulEnd(func()) }

// endGracefully ends one stream as Shutdown ends them all: what waits is
// delivered, then the completion result.
func (l *listeners) endGracefully(sub *subscription) {
	sub.mu.Lock()
	if sub.end == subOpen {
		sub.end = subClosing
	}
	ps := sub.scheduleLocked()
	sub.mu.Unlock()
	if ps != nil {
		l.writers.add(ps)
	} else {
		sub.signal()
	}
}

// shutdownListen ends every open subscriptions/listen stream gracefully
// and waits for their handlers, or for ctx (see Shutdown).
func (s *Server) shutdownListen(ctx context.Context) error {
	l := &s.listen
	var due []*parkedStream
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		for sub := range l.subs {
			sub.mu.Lock()
			if sub.end == subOpen {
				sub.end = subClosing
			}
			if ps := sub.scheduleLocked(); ps != nil {
				due = append(due, ps)
			}
			sub.mu.Unlock()
			sub.signal()
		}
	}
	l.mu.Unlock()
	l.writers.add(due...)
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	l.busOnce.Do(func() {}) // no Subscribe after this point
	if l.unsub != nil {
		l.unsub()
	}
	return nil
}

// streamer is implemented by Notifiers that can tell whether they deliver
// notifications at all (an HTTP response whose client does not accept SSE
// cannot).
type streamer interface{ streams() bool }

// aborter is implemented by Notifiers that can unblock a write stuck on a
// client that stopped reading.
type aborter interface{ abort() }

// handleListen serves subscriptions/listen: it acknowledges the honoured
// filter at once, then delivers the requested notifications, each tagged
// with the subscription id (the request's JSON-RPC id), until the client
// goes away (ctx), the server shuts down (graceful completion result), or
// the client reads too slowly (the stream ends without a response).
//
// The setup happens in openListen, which returns before the stream idles:
// the idle goroutine waits in frames that hold little (this one and
// subscription.wait), so that the garbage collector can shrink its stack.
// A parked stream (park.go) leaves at once: the transport has nothing more
// to write, and the stream's writes happen elsewhere.
func handleListen(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	st, err := openListen(ctx, x)
	if err != nil {
		return nil, err
	}
	if ps := st.park; ps != nil {
		if ps.held != nil {
			<-ps.held
		} else if ps.done != nil {
			<-ps.done
			return nil, parkedEnd(ps)
		}
		return nil, errNoResponse
	}
	defer x.s.listen.close(st.sub)
	for {
		if !st.sub.wait(ctx) {
			return nil, requestCancelled(ctx)
		}
		if out, end, err := st.flush(ctx, dst); end {
			return out, err
		}
	}
}

// listenStream is the state of one open listen stream's handler.
type listenStream struct {
	x   *exchange
	sub *subscription
	// params is the params object of the notification being sent; it
	// starts with tag, {"_meta":{"io.modelcontextprotocol/subscriptionId":ID}
	params []byte
	tag    int
	sent   map[string][]byte // the last notifications/tasks per task; nil without tasks
	park   *parkedStream     // set when the stream is parked: its events go there
}

// notify sends a notification on the stream.
func (st *listenStream) notify(method string, params []byte) {
	if st.park != nil {
		st.park.notify(method, params)
		return
	}
	st.x.notify(method, params)
}

// openListen checks a listen request, registers its subscription and sends
// the acknowledgement.
func openListen(ctx context.Context, x *exchange) (*listenStream, error) {
	l := &x.s.listen
	supported := x.snap.listenKinds
	if !l.enabled() || supported == 0 {
		return nil, methodNotFound(x.method)
	}
	f, err := listenFilter(x.params)
	if err != nil {
		return nil, err
	}
	if len(f.ResourceSubscriptions) > maxListenURIs || len(f.TaskIDs) > maxListenURIs {
		return nil, InvalidParams("Invalid params: at most " + strconv.Itoa(maxListenURIs) + " resourceSubscriptions and " + strconv.Itoa(maxListenURIs) + " taskIds per subscriptions/listen request")
	}
	total := 0
	for _, u := range f.ResourceSubscriptions {
		if len(u) > maxListenURIBytes {
			return nil, InvalidParams("Invalid params: a URI in resourceSubscriptions is longer than " + strconv.Itoa(maxListenURIBytes) + " bytes")
		}
		total += len(u)
	}
	if total > maxListenURIsBytes {
		return nil, InvalidParams("Invalid params: the URIs in resourceSubscriptions total more than " + strconv.Itoa(maxListenURIsBytes) + " bytes")
	}
	if st, ok := x.notifier.(streamer); x.notifier == nil || (ok && !st.streams()) {
		return nil, &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Not Acceptable: subscriptions/listen answers with a stream of notifications; the Accept header must allow text/event-stream", status: http.StatusNotAcceptable}
	}

	// The honoured subset: the requested kinds this server supports.
	var ack SubscriptionFilter
	st := &listenStream{x: x}
	sub := &subscription{id: string(x.id.Raw()), wake: make(chan struct{}, 1)}
	st.sub = sub
	honour := func(asked bool, k ChangeKind) bool {
		if asked && supported&(1<<k) != 0 {
			sub.kinds |= 1 << k
			return true
		}
		return false
	}
	ack.ToolsListChanged = honour(f.ToolsListChanged, ToolsListChanged)
	ack.PromptsListChanged = honour(f.PromptsListChanged, PromptsListChanged)
	ack.ResourcesListChanged = honour(f.ResourcesListChanged, ResourcesListChanged)
	if f.ResourceSubscriptions != nil && honour(true, ResourceUpdated) {
		ack.ResourceSubscriptions = f.ResourceSubscriptions
		sub.uris = slices.Compact(slices.Sorted(slices.Values(f.ResourceSubscriptions)))
		sub.uris = slices.Clip(sub.uris)
	}
	if f.TaskIDs != nil {
		ids, err := x.listenTasks(ctx, f.TaskIDs)
		if err != nil {
			return nil, err
		}
		if ids != nil {
			ack.TaskIDs = ids
			sub.kinds |= 1 << TaskChanged
			sub.tasks = make(map[string]struct{}, len(ids))
			for _, id := range ids {
				sub.tasks[id] = struct{}{}
			}
			st.sent = map[string][]byte{}
		}
	}
	if a, ok := x.notifier.(aborter); ok {
		sub.abort = a.abort
	}
	sub.client = x.clientKey()
	if err := x.s.quota.take(quotaSubscriptions, sub.client); err != nil {
		return nil, err
	}
	if err := l.open(sub); err != nil {
		x.s.quota.release(quotaSubscriptions, sub.client)
		return nil, err
	}
	if l.observe != nil {
		end, err := l.observe(ctx, &x.info, ack)
		sub.ended = end
		if err != nil {
			l.close(sub)
			return nil, err
		}
	}
	if g, ok := x.notifier.(gracefulEnder); ok {
		g.onGracefulEnd(func() { l.endGracefully(sub) })
	}

	// The stream keeps the tag, with room for a short change after it;
	// the acknowledgement is built in a pooled buffer.
	id := x.id.Raw()
	tag := make([]byte, 0, len(`{"_meta":{`)+len(protocol.MetaSubscriptionID)+len(id)+48)
	tag = append(tag, `{"_meta":{`...)
	tag = appendMember(tag, protocol.MetaSubscriptionID, id)
	tag = append(tag, '}')
	st.params, st.tag = tag, len(tag)
	buf := x.s.getBuf()
	params := append(*buf, tag...)
	params = append(params, `,"notifications":`...)
	params = append(params, mustMarshal(ack)...)
	params = append(params, '}')
	const ackMethod = "notifications/subscriptions/acknowledged"
	parked, err := l.hijackListen(st, ackMethod, params)
	if !parked {
		x.notify(ackMethod, params)
	}
	*buf = params
	x.s.putBuf(buf)
	if err != nil {
		// The connection failed as the stream started: nothing to answer.
		l.close(sub)
		return nil, errNoResponse
	}
	return st, nil
}

// flush sends the changes waiting for the stream. When the stream ends it
// returns end true with the handler's answer: the completion result at
// Shutdown, errNoResponse for a dropped stream.
func (st *listenStream) flush(ctx context.Context, dst []byte) (out []byte, end bool, err error) {
	for {
		c, ok, why := st.sub.next()
		if ok {
			st.send(ctx, c)
			continue
		}
		switch why {
		case subDropped:
			x := st.x
			params := append(st.params[:st.tag], `,"requestId":`...)
			params = append(params, x.id.Raw()...)
			params = append(params, `,"reason":"the client did not keep up with notifications"}`...)
			st.notify("notifications/cancelled", params)
			return nil, true, errNoResponse
		case subClosing:
			// What was waiting has been delivered: end gracefully.
			meta := append([]byte(`{`), st.params[len(`{"_meta":{`):st.tag-1]...)
			meta = append(meta, '}')
			return st.x.appendResult(dst, resultComplete, false, nil, meta), true, nil
		}
		return nil, false, nil
	}
}

// send delivers one change.
func (st *listenStream) send(ctx context.Context, c Change) {
	params := st.params[:st.tag]
	switch c.Kind {
	case ResourceUpdated:
		params = append(params, `,"uri":`...)
		params = wire.AppendString(params, c.URI)
	case TaskChanged:
		var ok bool
		if params, ok = st.x.appendTaskNotification(ctx, params, c.TaskID, st.sent); !ok {
			st.params = params
			return // gone (expired) meanwhile, or nothing new
		}
	}
	params = append(params, '}')
	st.params = params
	st.notify(c.Kind.String(), params)
}

// listenFilter decodes params.notifications of a listen request. Keys match
// exactly (a client asking for "ToolsListChanged" asked for nothing);
// unknown keys are ignored and null counts as absent.
func listenFilter(params []byte) (*SubscriptionFilter, error) {
	nv, ok := jsonscan.Lookup(params, "notifications")
	if !ok || !jsonscan.IsObject(nv) {
		return nil, InvalidParams("Invalid params: subscriptions/listen needs a notifications object (the filter of notification types)")
	}
	f := new(SubscriptionFilter)
	it, _ := jsonscan.Object(nv)
	var m jsonscan.Member
	for it.Next(&m) {
		var flag *bool
		switch {
		case m.KeyIs("toolsListChanged"):
			flag = &f.ToolsListChanged
		case m.KeyIs("promptsListChanged"):
			flag = &f.PromptsListChanged
		case m.KeyIs("resourcesListChanged"):
			flag = &f.ResourcesListChanged
		case m.KeyIs("taskIds"):
			switch jsonscan.Kind(m.Value) {
			case 'n':
				continue
			case '[':
				if err := json.Unmarshal(m.Value, &f.TaskIDs); err == nil {
					if f.TaskIDs == nil {
						f.TaskIDs = []string{}
					}
					continue
				}
			}
			return nil, InvalidParams("Invalid params: notifications.taskIds must be an array of task ids")
		case m.KeyIs("resourceSubscriptions"):
			switch jsonscan.Kind(m.Value) {
			case 'n':
				continue
			case '[':
				if err := json.Unmarshal(m.Value, &f.ResourceSubscriptions); err == nil {
					continue
				}
			}
			return nil, InvalidParams("Invalid params: notifications.resourceSubscriptions must be an array of resource URIs")
		default:
			continue
		}
		switch jsonscan.Kind(m.Value) {
		case 't', 'f', 'n':
			*flag = jsonscan.Kind(m.Value) == 't' // the last of duplicate keys wins
		default:
			return nil, InvalidParams("Invalid params: notifications." + string(m.Key) + " must be a boolean")
		}
	}
	return f, nil
}
