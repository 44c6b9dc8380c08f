package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// ListenFilter says which notifications a Listen stream asks for.
type ListenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// Missing returns what of f the acknowledged filter ack leaves out: the
// notifications asked for that the server will not send.
func (f ListenFilter) Missing(ack ListenFilter) ListenFilter {
	var m ListenFilter
	m.ToolsListChanged = f.ToolsListChanged && !ack.ToolsListChanged
	m.PromptsListChanged = f.PromptsListChanged && !ack.PromptsListChanged
	m.ResourcesListChanged = f.ResourcesListChanged && !ack.ResourcesListChanged
	for _, u := range f.ResourceSubscriptions {
		if !slices.Contains(ack.ResourceSubscriptions, u) {
			m.ResourceSubscriptions = append(m.ResourceSubscriptions, u)
		}
	}
	return m
}

// ListenEvent is one event of a Listen stream: an acknowledgment (the
// first event of every stream, and of every stream reopened after a
// disconnect) or a notification.
type ListenEvent struct {
	// Acknowledged is the filter the server agreed to honour, which may be
	// less than the one asked for (compare with ListenFilter.Missing). Set
	// on acknowledgments only.
	Acknowledged *ListenFilter
	// Reconnected reports that the acknowledgment is for a stream reopened
	// after a disconnect: notifications may have been missed, so re-list
	// what matters.
	Reconnected bool
	// Notification is set on notifications only.
	Notification *Notification
}

// Backoff bounds for reopening a Listen stream that dropped.
const (
	listenMinBackoff  = 100 * time.Millisecond
	listenMaxBackoff  = 30 * time.Second
	listenMaxFailures = 10
	listenBuffer      = 256
)

// Listen opens a subscriptions/listen stream (on a legacy server: the
// session's notifications, with resources/subscribe for the resources
// named) and yields its events until ctx ends, the server closes the
// subscription gracefully, or the stream cannot be reopened: a dropped
// stream is reopened with exponential backoff (100ms up to 30s), and
// after 10 failed attempts in a row the last error is yielded. Stopping
// the iteration, or cancelling ctx, ends the subscription.
func (c *Client) Listen(ctx context.Context, filter ListenFilter) iter.Seq2[*ListenEvent, error] {
	return c.ev.listen(c, ctx, filter)
}

// listenModern is Listen on a modern server: a subscriptions/listen
// stream.
func (c *Client) listenModern(ctx context.Context, filter ListenFilter) iter.Seq2[*ListenEvent, error] {
	return func(yield func(*ListenEvent, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// Close ends the stream too.
		defer context.AfterFunc(c.life, cancel)()
		events := make(chan *ListenEvent, listenBuffer)
		failures := 0
		backoff := listenMinBackoff
		for attempt := 0; ctx.Err() == nil; attempt++ {
			done := make(chan error, 1)
			acked := false
			go func() { done <- c.listenOnce(ctx, filter, events) }()
			// deliver yields one event of this attempt's stream; an
			// acknowledgment says whether the stream is a reopened one.
			deliver := func(ev *ListenEvent) bool {
				if ev.Acknowledged != nil {
					ev.Reconnected = attempt > 0
					acked = true
					failures, backoff = 0, listenMinBackoff
				}
				return yield(ev, nil)
			}
		stream:
			for {
				select {
				case ev := <-events:
					if !deliver(ev) {
						return
					}
				case err := <-done:
					// Deliver what arrived before the stream ended (an
					// acknowledgment too, when the stream ended at once).
					for len(events) > 0 {
						if !deliver(<-events) {
							return
						}
					}
					if err == nil {
						return // the server closed the subscription gracefully
					}
					if c.isClosed() {
						yield(nil, fmt.Errorf("client: subscriptions/listen: %w", ErrClosed))
						return
					}
					if ctx.Err() != nil {
						return
					}
					var me *mcp.Error
					if errors.As(err, &me) && !acked {
						// A protocol error for the request itself: reopening
						// would get the same.
						yield(nil, err)
						return
					}
					failures++
					if failures >= listenMaxFailures {
						yield(nil, err)
						return
					}
					break stream
				case <-ctx.Done():
					if c.isClosed() {
						yield(nil, fmt.Errorf("client: subscriptions/listen: %w", ErrClosed))
					}
					return
				}
			}
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(backoff*2, listenMaxBackoff)
		}
	}
}

// errStreamDropped says that a listen stream ended without its response.
var errStreamDropped = errors.New("client: the subscriptions/listen stream ended without a response")

// listenOnce runs one subscriptions/listen request until its response or
// the end of its stream, passing its events on.
func (c *Client) listenOnce(ctx context.Context, filter ListenFilter, events chan<- *ListenEvent) error {
	params := map[string]any{"notifications": filter}
	req, err := c.request("subscriptions/listen", params, &callState{cfg: &callConfig{}})
	if err != nil {
		return err
	}
	var key string
	deliver := func(m *jsonrpc.Message) {
		ev := listenEvent(m)
		if ev == nil {
			return
		}
		select {
		case events <- ev:
		case <-ctx.Done():
		}
	}
	req.Cancel = true
	req.OnID = func(id jsonrpc.ID) {
		key = string(id.Raw())
		c.mu.Lock()
		c.subs[key] = deliver
		c.mu.Unlock()
	}
	defer func() {
		c.mu.Lock()
		delete(c.subs, key)
		c.mu.Unlock()
	}()
	req.OnNotify = func(raw []byte, m *jsonrpc.Message) {
		c.observe(m)
		deliver(m)
	}
	r, err := c.sess.Conn().RoundTrip(ctx, req)
	if err != nil {
		return publicError(err)
	}
	if r.Msg == nil {
		return errStreamDropped
	}
	if r.Msg.Error != nil {
		return rpcError(r.Msg.Error)
	}
	return nil
}

// listenEvent converts a notification of a listen stream.
func listenEvent(m *jsonrpc.Message) *ListenEvent {
	if m.Method == "notifications/subscriptions/acknowledged" {
		var w struct {
			Notifications ListenFilter `json:"notifications"`
		}
		json.Unmarshal(m.Params, &w)
		return &ListenEvent{Acknowledged: &w.Notifications}
	}
	n := &Notification{Method: m.Method}
	if len(m.Params) > 0 {
		n.Params = append(json.RawMessage(nil), m.Params...)
	}
	return &ListenEvent{Notification: n}
}

// subscriptionID returns the io.modelcontextprotocol/subscriptionId of a
// notification, as raw JSON, or "".
func subscriptionID(params json.RawMessage) string {
	if len(params) == 0 {
		return ""
	}
	var w struct {
		Meta struct {
			ID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &w) != nil {
		return ""
	}
	return string(w.Meta.ID)
}

// listenLegacy listens to a legacy session's notifications: the list
// changes the server's capabilities announce, and updates of the
// resources it subscribes to with resources/subscribe.
func (c *Client) listenLegacy(ctx context.Context, filter ListenFilter) iter.Seq2[*ListenEvent, error] {
	return func(yield func(*ListenEvent, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(c.life, cancel)()
		ack := ListenFilter{}
		caps := c.scaps
		ack.ToolsListChanged = filter.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
		ack.PromptsListChanged = filter.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
		ack.ResourcesListChanged = filter.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged
		if caps.Resources != nil && caps.Resources.Subscribe {
			// The session holds one subscription per URI, shared by the
			// streams that name it: the last to end unsubscribes.
			defer func() { c.unsubscribeURIs(ctx, ack.ResourceSubscriptions) }()
			for _, u := range slices.Compact(slices.Sorted(slices.Values(filter.ResourceSubscriptions))) {
				if err := c.subscribeURI(ctx, u); err != nil {
					yield(nil, err)
					return
				}
				ack.ResourceSubscriptions = append(ack.ResourceSubscriptions, u)
			}
		}
		events := make(chan *ListenEvent, listenBuffer)
		fn := func(m *jsonrpc.Message) bool {
			if !legacyWanted(ack, m) {
				return false
			}
			select {
			case events <- listenEvent(m):
			case <-ctx.Done():
			}
			return true
		}
		c.mu.Lock()
		c.nextTok++
		key := "legacy-" + strconv.FormatInt(c.nextTok, 10)
		c.legacySubs[key] = fn
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.legacySubs, key)
			c.mu.Unlock()
		}()
		if !yield(&ListenEvent{Acknowledged: &ack}, nil) {
			return
		}
		for {
			select {
			case ev := <-events:
				if !yield(ev, nil) {
					return
				}
			case <-ctx.Done():
				if c.isClosed() {
					yield(nil, fmt.Errorf("client: listening: %w", ErrClosed))
				}
				return
			}
		}
	}
}

func legacyWanted(f ListenFilter, m *jsonrpc.Message) bool {
	switch m.Method {
	case "notifications/tools/list_changed":
		return f.ToolsListChanged
	case "notifications/prompts/list_changed":
		return f.PromptsListChanged
	case "notifications/resources/list_changed":
		return f.ResourcesListChanged
	case "notifications/resources/updated":
		var w struct {
			URI string `json:"uri"`
		}
		json.Unmarshal(m.Params, &w)
		return slices.Contains(f.ResourceSubscriptions, w.URI)
	}
	return false
}

// subscribeURI takes a reference on the legacy session's subscription to
// uri, sending resources/subscribe when it is the first.
func (c *Client) subscribeURI(ctx context.Context, uri string) error {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	if c.uriRefs[uri] == 0 {
		if _, err := c.call(ctx, "resources/subscribe", map[string]any{"uri": uri}, newConfig(nil)); err != nil {
			return err
		}
	}
	if c.uriRefs == nil {
		c.uriRefs = map[string]int{}
	}
	c.uriRefs[uri]++
	return nil
}

// unsubscribeURIs drops a reference on each of uris, sending
// resources/unsubscribe for those no stream holds any more (bounded by 5
// seconds, also when ctx has ended).
func (c *Client) unsubscribeURIs(ctx context.Context, uris []string) {
	if len(uris) == 0 {
		return
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	c.subMu.Lock()
	defer c.subMu.Unlock()
	for _, u := range uris {
		if c.uriRefs[u]--; c.uriRefs[u] > 0 {
			continue
		}
		delete(c.uriRefs, u)
		c.call(uctx, "resources/unsubscribe", map[string]any{"uri": u}, newConfig(nil))
	}
}
