package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/jsonrpc"
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
	// defaultMaxSubscriptions is ServerOptions.MaxSubscriptions' default.
	defaultMaxSubscriptions = 10000
	// listenBuffer is how many changes may wait for one listen stream.
	// A stream whose client reads so slowly that more pile up is dropped,
	// so that it never holds up delivery to the others.
	listenBuffer = 32
	// maxListenURIs bounds resourceSubscriptions of one listen request.
	maxListenURIs = 1000
)

// errNoResponse makes Handle answer nothing: the transport ends the
// response without a JSON-RPC response (an abrupt end of a listen stream,
// which tells the client to reconnect).
var errNoResponse = errors.New("mcp: no response")

// errShuttingDown answers listen requests that arrive during Shutdown.
var errShuttingDown = &Error{Code: CodeInternalError, Message: "Server shutting down: subscriptions/listen is no longer accepted; retry on another replica", status: http.StatusServiceUnavailable}

// listeners is a Server's set of open subscriptions/listen streams.
type listeners struct {
	s   *Server
	max int // < 0: listen is off

	busOnce sync.Once
	unsub   func() // set once by busOnce; called by Shutdown

	mu      sync.Mutex // guards subs and closed
	subs    map[*subscription]struct{}
	closed  bool
	closing chan struct{} // closed by Shutdown
	wg      sync.WaitGroup
}

func (l *listeners) init(s *Server, max int) {
	l.s = s
	l.max = max
	if l.max == 0 {
		l.max = defaultMaxSubscriptions
	}
	l.subs = make(map[*subscription]struct{})
	l.closing = make(chan struct{})
}

// enabled reports whether subscriptions/listen is served at all.
func (l *listeners) enabled() bool { return l.max > 0 }

// subscription is one open listen stream.
type subscription struct {
	id    string              // the JSON-RPC id, for logs
	kinds uint8               // bit 1<<ChangeKind for every honoured kind
	uris  map[string]struct{} // honoured resourceSubscriptions
	tasks map[string]struct{} // honoured taskIds
	ch    chan Change
	gone  chan struct{} // closed when the server drops the stream
	abort func()        // unblocks a transport write in progress; may be nil
}

func (sub *subscription) wants(c Change) bool {
	if sub.kinds&(1<<c.Kind) == 0 {
		return false
	}
	switch c.Kind {
	case ResourceUpdated:
		_, ok := sub.uris[c.URI]
		return ok
	case TaskChanged:
		_, ok := sub.tasks[c.TaskID]
		return ok
	}
	return true
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
			Code:    CodeInternalError,
			Message: "Too many open subscriptions: this server allows " + strconv.Itoa(l.max) + " subscriptions/listen streams at once; retry later",
			Data:    json.RawMessage(`{"maxSubscriptions":` + strconv.Itoa(l.max) + `}`),
			status:  http.StatusServiceUnavailable,
		}
	}
	l.subs[sub] = struct{}{}
	l.wg.Add(1)
	return nil
}

// close unregisters a subscription whose handler is returning.
func (l *listeners) close(sub *subscription) {
	l.mu.Lock()
	delete(l.subs, sub)
	l.mu.Unlock()
	l.wg.Done()
}

// count returns the number of open subscriptions.
func (l *listeners) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.subs)
}

// deliver hands c to every subscription that wants it, without ever
// blocking: a subscription whose buffer is full is dropped.
func (l *listeners) deliver(c Change) {
	var slow []*subscription
	l.mu.Lock()
	for sub := range l.subs {
		if !sub.wants(c) {
			continue
		}
		select {
		case sub.ch <- c:
		default:
			slow = append(slow, sub)
			delete(l.subs, sub)
		}
	}
	l.mu.Unlock()
	for _, sub := range slow {
		l.s.log.Warn("mcp: dropping a subscriptions/listen stream: its client does not keep up with notifications", "subscriptionId", sub.id, "buffered", listenBuffer)
		close(sub.gone)
		if sub.abort != nil {
			sub.abort()
		}
	}
}

// shutdownListen ends every open subscriptions/listen stream gracefully
// and waits for their handlers, or for ctx (see Shutdown).
func (s *Server) shutdownListen(ctx context.Context) error {
	l := &s.listen
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.closing)
	}
	l.mu.Unlock()
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
func handleListen(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
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
	if st, ok := x.notifier.(streamer); x.notifier == nil || (ok && !st.streams()) {
		return nil, &Error{Code: CodeInvalidRequest, Message: "Not Acceptable: subscriptions/listen answers with a stream of notifications; the Accept header must allow text/event-stream", status: http.StatusNotAcceptable}
	}

	// The honoured subset: the requested kinds this server supports.
	var ack SubscriptionFilter
	sub := &subscription{id: string(x.id.Raw()), ch: make(chan Change, listenBuffer), gone: make(chan struct{})}
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
		sub.uris = make(map[string]struct{}, len(f.ResourceSubscriptions))
		for _, u := range f.ResourceSubscriptions {
			sub.uris[u] = struct{}{}
		}
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
		}
	}
	if a, ok := x.notifier.(aborter); ok {
		sub.abort = a.abort
	}
	if err := l.open(sub); err != nil {
		return nil, err
	}
	defer l.close(sub)

	// tag is the start of every params object on the stream:
	// {"_meta":{"io.modelcontextprotocol/subscriptionId":ID}
	id := x.id.Raw()
	tag := make([]byte, 0, 64+len(id))
	tag = append(tag, `{"_meta":{`...)
	tag = appendMember(tag, metaSubscriptionID, id)
	tag = append(tag, '}')

	params := append(tag, `,"notifications":`...)
	params = append(params, mustMarshal(ack)...)
	params = append(params, '}')
	x.notify("notifications/subscriptions/acknowledged", params)

	sent := map[string][]byte{} // the last notifications/tasks per task
	send := func(c Change) {
		params = params[:len(tag)]
		switch c.Kind {
		case ResourceUpdated:
			params = append(params, `,"uri":`...)
			params = jsonrpc.AppendString(params, c.URI)
		case TaskChanged:
			var ok bool
			if params, ok = x.appendTaskNotification(ctx, params, c.TaskID, sent); !ok {
				return // gone (expired) meanwhile, or nothing new
			}
		}
		params = append(params, '}')
		x.notify(c.Kind.String(), params)
	}
	for {
		select {
		case c := <-sub.ch:
			send(c)
		case <-sub.gone:
			params = append(params[:len(tag)], `,"requestId":`...)
			params = append(params, id...)
			params = append(params, `,"reason":"the client did not keep up with notifications"}`...)
			x.notify("notifications/cancelled", params)
			return nil, errNoResponse
		case <-ctx.Done():
			return nil, &Error{Code: CodeInternalError, Message: "Request cancelled", Err: ctx.Err()}
		case <-l.closing:
			// Deliver what is already waiting, then end gracefully.
			for len(sub.ch) > 0 {
				send(<-sub.ch)
			}
			meta := append([]byte(`{`), tag[len(`{"_meta":{`):len(tag)-1]...)
			meta = append(meta, '}')
			return x.appendResult(dst, resultComplete, false, nil, meta), nil
		}
	}
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
