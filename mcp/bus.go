package mcp

import (
	"errors"
	"strconv"
	"strings"
	"sync"
)

// ChangeKind is the kind of a Change: which notification it becomes on a
// subscriptions/listen stream.
type ChangeKind uint8

// The kinds of change a subscriptions/listen stream can be told about.
const (
	// ToolsListChanged: the set of tools changed
	// (notifications/tools/list_changed).
	ToolsListChanged ChangeKind = iota + 1
	// PromptsListChanged: the set of prompts changed
	// (notifications/prompts/list_changed).
	PromptsListChanged
	// ResourcesListChanged: the set of resources or resource templates
	// changed (notifications/resources/list_changed).
	ResourcesListChanged
	// ResourceUpdated: the resource named by Change.URI changed
	// (notifications/resources/updated).
	ResourceUpdated
	// TaskChanged: the task named by Change.TaskID changed: its status,
	// status message, input requests, result or error
	// (notifications/tasks, with the task as tasks/get reports it).
	TaskChanged
)

// String returns the method of the notification the kind becomes, such as
// "notifications/tools/list_changed", or "" for an unknown kind.
func (k ChangeKind) String() string {
	switch k {
	case ToolsListChanged:
		return "notifications/tools/list_changed"
	case PromptsListChanged:
		return "notifications/prompts/list_changed"
	case ResourcesListChanged:
		return "notifications/resources/list_changed"
	case ResourceUpdated:
		return "notifications/resources/updated"
	case TaskChanged:
		return "notifications/tasks"
	}
	return ""
}

// Change is one event that open subscriptions/listen streams may be told
// about: a list of tools, prompts or resources changed, one resource was
// updated, or one task changed. Servers publish Changes on their Bus and
// deliver the Changes they receive from it.
type Change struct {
	Kind ChangeKind
	// URI names the updated resource of a ResourceUpdated change; it is
	// empty for the other kinds.
	URI string
	// TaskID names the task of a TaskChanged change; it is empty for the
	// other kinds.
	TaskID string
	// Scope, when not empty, is the ID (Principal.ID) of the one caller
	// the change is for: only that principal's subscriptions/listen
	// streams and legacy sessions are told; streams and sessions of other
	// principals, or without one, never see it. Empty: the change is for
	// every listener. A bridge that runs a backend per principal scopes
	// what each backend reports.
	Scope string
}

// arg returns the argument of c's kind (the URI or the task id), and
// whether the kind has one.
func (c Change) arg() (string, bool) {
	switch c.Kind {
	case ResourceUpdated:
		return c.URI, true
	case TaskChanged:
		return c.TaskID, true
	}
	return "", false
}

// MarshalText encodes c as the method of its notification, followed by a
// space and the URI for ResourceUpdated or the task id for TaskChanged:
// "notifications/resources/updated file:///a.txt". A scoped change starts
// with "@", its Scope as a Go-quoted string and a space:
// `@"https://issuer alice" notifications/tools/list_changed` (a decoder
// that predates scopes rejects it, so an older replica drops a scoped
// change rather than tell everyone). Bus implementations that carry
// Changes between processes can use it as their wire format.
func (c Change) MarshalText() ([]byte, error) {
	m := c.Kind.String()
	if m == "" {
		return nil, errors.New("mcp: Change with unknown kind")
	}
	arg, has := c.arg()
	if has && arg == "" {
		return nil, errors.New("mcp: " + m + " change without its URI or task id")
	}
	if c.Scope != "" {
		m = "@" + strconv.Quote(c.Scope) + " " + m
	}
	if !has {
		return []byte(m), nil
	}
	return []byte(m + " " + arg), nil
}

// UnmarshalText decodes the form written by MarshalText.
func (c *Change) UnmarshalText(b []byte) error {
	text := string(b)
	var scope string
	if strings.HasPrefix(text, "@") {
		q, err := strconv.QuotedPrefix(text[1:])
		if err == nil {
			scope, err = strconv.Unquote(q)
		}
		rest, ok := strings.CutPrefix(text[1+len(q):], " ")
		if err != nil || !ok || scope == "" || strconv.Quote(scope) != q {
			return errors.New("mcp: malformed Change " + strconvQuote(text))
		}
		text = rest
	}
	m, arg, _ := strings.Cut(text, " ")
	for k := ToolsListChanged; k <= TaskChanged; k++ {
		if m != k.String() {
			continue
		}
		d := Change{Kind: k, Scope: scope}
		switch k {
		case ResourceUpdated:
			d.URI = arg
		case TaskChanged:
			d.TaskID = arg
		}
		if _, has := d.arg(); has != (arg != "") {
			break
		}
		*c = d
		return nil
	}
	return errors.New("mcp: malformed Change " + strconvQuote(string(b)))
}

// Bus carries Changes to every Server subscribed to it. The default, used
// when ServerOptions.Bus is nil, is a LocalBus private to the Server: it
// reaches the subscriptions/listen streams of that one process. A
// distributed Bus (such as the Redis one in the module
// github.com/mcpkit/mcpkit/redis) carries Changes between replicas, so that
// a change made on one replica reaches listeners on every replica.
//
// Implementations must be safe for concurrent use.
type Bus interface {
	// Publish sends c to every subscriber, those of this process included.
	// It must not block for long: a distributed Bus delivers locally at
	// once, sends to its peers in the background, and deals with (and
	// logs) failures itself.
	Publish(c Change)
	// Subscribe calls fn with every Change published from now on, until
	// the returned function is called. fn must return quickly and must not
	// call Publish; calls to one fn do not overlap.
	Subscribe(fn func(Change)) (unsubscribe func())
}

// LocalBus is the in-process Bus: Publish calls every subscriber's function
// before it returns. The zero value is ready to use; it is safe for
// concurrent use. Distributed Bus implementations can embed one for local
// delivery.
type LocalBus struct {
	mu   sync.Mutex // serializes delivery: subscriber calls never overlap
	subs map[*localSub]struct{}
}

type localSub struct{ fn func(Change) }

// Publish calls the function of every current subscriber with c.
func (b *LocalBus) Publish(c Change) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		s.fn(c)
	}
}

// Subscribe registers fn; see Bus.
func (b *LocalBus) Subscribe(fn func(Change)) (unsubscribe func()) {
	s := &localSub{fn: fn}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = make(map[*localSub]struct{})
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.subs, s)
		b.mu.Unlock()
	}
}
