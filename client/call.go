package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	iclient "github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// A CallOption adjusts one request.
type CallOption func(*callConfig)

type callConfig struct {
	meta     map[string]any
	progress func(Progress)
	status   func(TaskState)
	log      func(*LogMessage)
	level    mcp.LogLevel
	noCache  bool
	relay    bool           // ReturnInputRequired
	icMeta   map[string]any // _meta the interceptors add (intercept.go); it does not bypass the cache
}

// WithMeta adds keys to the request's _meta. Keys the client sets itself
// (protocol version, client capabilities, client info) are overridden only
// when the caller names them.
func WithMeta(meta map[string]any) CallOption {
	return func(c *callConfig) {
		if c.meta == nil {
			c.meta = map[string]any{}
		}
		for k, v := range meta {
			c.meta[k] = v
		}
	}
}

// WithProgress asks the server for progress notifications and passes them
// to fn while the request runs. When a tool call becomes a task, CallTool
// and Task.Wait go on calling fn while they poll: each change of the task's
// statusMessage comes as a Progress with only Message set. fn is called on
// the caller's goroutine or the client's reader, one call at a time.
func WithProgress(fn func(Progress)) CallOption {
	return func(c *callConfig) { c.progress = fn }
}

// WithTaskStatus passes fn the whole state of the task a tool call became,
// each time CallTool or Task.Wait sees it change (status, statusMessage or
// lastUpdatedAt): the state of the CreateTaskResult first, then each
// changed tasks/get, the terminal one last. fn is called on the goroutine
// that polls, one call at a time; the state is a copy fn may keep. The
// option has no effect on a call that does not become a task.
func WithTaskStatus(fn func(TaskState)) CallOption {
	return func(c *callConfig) { c.status = fn }
}

// WithLog passes the log messages the server sends for this request to fn
// (on Streamable HTTP and in memory, where they are tied to the request;
// on stdio they go to Options.OnLog).
func WithLog(fn func(*LogMessage)) CallOption {
	return func(c *callConfig) { c.log = fn }
}

// WithLogLevel sets the least severe level of the log messages the server
// should send for this request (the logLevel _meta key of 2026-07-28).
func WithLogLevel(l mcp.LogLevel) CallOption {
	return func(c *callConfig) { c.level = l }
}

// NoCache bypasses the client's cache for this request: the server is
// asked again and the answer replaces any cached one.
func NoCache() CallOption {
	return func(c *callConfig) { c.noCache = true }
}

// ReturnInputRequired makes a tools/call, prompts/get or resources/read
// return an input_required result as it is (with its inputRequests and
// requestState) instead of answering its input requests and retrying: for
// a caller that relays them to someone else (the bridge package), which
// then retries with Call, passing inputResponses and requestState in the
// params. Without it (on a modern server) the client answers the rounds
// itself with Options.Input and friends.
func ReturnInputRequired() CallOption {
	return func(c *callConfig) { c.relay = true }
}

// Progress is one notifications/progress of a request.
type Progress struct {
	Progress float64
	// Total is 0 when the server did not say.
	Total   float64
	Message string
}

// LogMessage is a notifications/message.
type LogMessage struct {
	Level  mcp.LogLevel
	Logger string
	Data   json.RawMessage
}

// Notification is a notification from the server.
type Notification struct {
	Method string
	// Params is the raw params object, or nil.
	Params json.RawMessage
}

// callState is one request in flight, for routing its notifications.
type callState struct {
	cfg   *callConfig
	token string
	req   iclient.Request // the request of the current round
}

func newConfig(opts []CallOption) *callConfig {
	cfg := &callConfig{}
	for _, o := range opts {
		if o != nil {
			o(cfg)
		}
	}
	return cfg
}

// call sends method with params (a map of members, without _meta) and
// returns the result object, following input_required rounds for the
// methods that allow them.
func (c *Client) call(ctx context.Context, method string, params map[string]any, cfg *callConfig) (json.RawMessage, error) {
	if c.isClosed() {
		return nil, fmt.Errorf("client: %s: %w", method, ErrClosed)
	}
	if c.intercepting(ctx) {
		return c.callIntercepted(ctx, method, params, cfg)
	}
	if _, ok := ctx.Deadline(); !ok && c.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
		defer cancel()
	}
	st := &callState{cfg: cfg}
	if cfg.progress != nil {
		c.mu.Lock()
		c.nextTok++
		st.token = "p" + strconv.FormatInt(c.nextTok, 10)
		c.progress[st.token] = st
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.progress, st.token)
			c.mu.Unlock()
		}()
	}
	mrtr := method == "tools/call" || method == "prompts/get" || method == "resources/read"
	useCache := c.cache != nil && cacheable(method) && len(cfg.meta) == 0 && cfg.progress == nil && cfg.log == nil
	if useCache && !cfg.noCache {
		if res, ok := c.cache.lookup(method, params); ok {
			return res, nil
		}
	}
	var (
		responses map[string]json.RawMessage
		state     *string
	)
	for round := 0; ; round++ {
		p := make(map[string]any, len(params)+3)
		for k, v := range params {
			p[k] = v
		}
		if responses != nil {
			p["inputResponses"] = responses
		}
		if state != nil {
			p["requestState"] = *state
		}
		res, err := c.roundTrip(ctx, method, p, st)
		if err != nil {
			return nil, err
		}
		rt := resultType(res)
		switch rt {
		case "", "complete", "task":
			if useCache && round == 0 && rt != "task" {
				// A retry's result depends on inputs outside the key: only
				// a first answer is cached.
				c.cache.store(method, params, res)
			}
			return res, nil
		case "input_required":
		default:
			return nil, &ProtocolError{Method: method, Msg: fmt.Sprintf("unknown resultType %q", rt)}
		}
		if !mrtr {
			return nil, &ProtocolError{Method: method, Msg: "the server answered input_required, which " + method + " does not allow"}
		}
		if cfg.relay {
			return res, nil
		}
		if round+1 >= c.opts.MaxInputRounds {
			return nil, &ProtocolError{Method: method, Msg: fmt.Sprintf("the server still asked for input after %d rounds", c.opts.MaxInputRounds)}
		}
		var ir struct {
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  *string                    `json:"requestState"`
		}
		if err := json.Unmarshal(res, &ir); err != nil {
			return nil, &ProtocolError{Method: method, Msg: "malformed InputRequiredResult: " + err.Error()}
		}
		if len(ir.InputRequests) == 0 && ir.RequestState == nil {
			return nil, &ProtocolError{Method: method, Msg: "an InputRequiredResult with neither inputRequests nor requestState"}
		}
		responses = nil
		if len(ir.InputRequests) > 0 {
			if len(ir.InputRequests) > 64 {
				return nil, &ProtocolError{Method: method, Msg: fmt.Sprintf("%d input requests in one round (at most 64 are answered)", len(ir.InputRequests))}
			}
			responses = make(map[string]json.RawMessage, len(ir.InputRequests))
			for key, raw := range ir.InputRequests {
				var req struct {
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
				}
				if err := json.Unmarshal(raw, &req); err != nil {
					return nil, &ProtocolError{Method: method, Msg: fmt.Sprintf("input request %q is malformed: %v", key, err)}
				}
				out, err := c.answerInput(ctx, req.Method, req.Params)
				if err != nil {
					return nil, fmt.Errorf("client: %s: answering input request %q (%s): %w", method, key, req.Method, err)
				}
				responses[key] = out
			}
		}
		state = ir.RequestState // echoed exactly, or left out when absent
	}
}

// resultType reads a result's resultType without decoding the rest.
func resultType(res json.RawMessage) string {
	// A cheap look before decoding: most results have no resultType or
	// "complete".
	if !bytes.Contains(res, []byte(`"resultType"`)) {
		return ""
	}
	// res is valid JSON (the decoder checked it): read the one member
	// without decoding the rest, and the usual values without a copy.
	v, ok := jsonscan.Lookup(res, "resultType")
	if !ok {
		return ""
	}
	for _, known := range [...]string{"complete", "input_required", "task"} {
		if jsonscan.StringEqual(v, known) {
			return known
		}
	}
	rt, _ := jsonscan.String(v)
	return rt
}

// metaFor builds the request's _meta: the era's required keys, the
// progress token, the log level and the caller's keys.
func (c *Client) metaFor(st *callState) map[string]any {
	m := map[string]any{}
	if c.ev.perRequestMeta() {
		m[protocol.MetaProtocolVersion] = c.sess.Version()
		m[protocol.MetaClientCapabilities] = c.meta
		m[protocol.MetaClientInfo] = c.opts.ClientInfo
		if st.cfg.level != "" {
			m[protocol.MetaLogLevel] = st.cfg.level
		}
	}
	if st.token != "" {
		m["progressToken"] = st.token
	}
	for k, v := range st.cfg.icMeta {
		m[k] = v
	}
	for k, v := range st.cfg.meta {
		m[k] = v
	}
	return m
}

// roundTrip sends one request and returns its result object.
func (c *Client) roundTrip(ctx context.Context, method string, params map[string]any, st *callState) (json.RawMessage, error) {
	req := &st.req
	if err := c.fillRequest(req, method, params, st); err != nil {
		return nil, fmt.Errorf("client: %s: %w", method, err)
	}
	req.Cancel = true
	conn := c.sess.Conn()
	if _, stream := conn.(*iclient.StreamConn); !stream {
		// stdio ties no notification to a request (they all go to the
		// connection's handler): no callback to allocate there.
		req.OnNotify = func(raw []byte, m *jsonrpc.Message) { c.onRequestNotify(st, raw, m) }
	}
	r, err := conn.RoundTrip(ctx, req)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ErrTimeout) {
			return nil, fmt.Errorf("client: %s: %w", method, ctx.Err())
		}
		return nil, &callError{method: method, err: publicError(err)}
	}
	if r.TooLarge {
		return nil, fmt.Errorf("client: %s: %w", method, ErrTooLarge)
	}
	if r.Msg == nil {
		return nil, &ProtocolError{Method: method, Status: r.Status, Msg: "no JSON-RPC response: " + r.Describe()}
	}
	if r.Msg.Error != nil {
		if ctx.Err() != nil {
			// The server's answer to a cancelled call (its handler saw
			// the cancellation too) won the race with ctx: the caller
			// cancelled, so that is what it learns; the answer stays in
			// the chain for errors.As.
			return nil, fmt.Errorf("client: %s: %w (the server answered: %w)", method, ctx.Err(), rpcError(r.Msg.Error))
		}
		return nil, rpcError(r.Msg.Error)
	}
	res := r.Msg.Result
	if jsonscan.Kind(res) != '{' {
		return nil, &ProtocolError{Method: method, Status: r.Status, Msg: "the result is not a JSON object"}
	}
	return res, nil
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Call sends any request (a custom method, say) with params (nil, or a
// value that encodes to a JSON object) and returns the raw result. The
// era's _meta and headers are added as for every other call; keys of the
// params' own _meta are kept (WithMeta keys win over them).
func (c *Client) Call(ctx context.Context, method string, params any, opts ...CallOption) (json.RawMessage, error) {
	p := map[string]any{}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("client: %s: %w", method, err)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("client: %s: params must encode to a JSON object", method)
		}
		for k, v := range obj {
			if k == "_meta" {
				// The params' own _meta keys go with the request, under
				// those of WithMeta.
				var meta map[string]json.RawMessage
				if err := json.Unmarshal(v, &meta); err != nil {
					return nil, fmt.Errorf("client: %s: params._meta must be an object", method)
				}
				if len(meta) > 0 {
					m := make(map[string]any, len(meta))
					for mk, mv := range meta {
						m[mk] = mv
					}
					opts = append([]CallOption{WithMeta(m)}, opts...)
				}
				continue
			}
			p[k] = v
		}
	}
	return c.call(ctx, method, p, newConfig(opts))
}

// Ping checks that the server answers (ping is a legacy method; a modern
// server is asked server/discover instead).
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.call(ctx, c.ev.pingMethod(), nil, newConfig([]CallOption{NoCache()}))
	return err
}

// callError is a request's transport failure: "client: METHOD: " and the
// cause, whose own "client: " prefix (a *TransportError's) is not repeated.
type callError struct {
	method string
	err    error
}

func (e *callError) Error() string {
	return "client: " + e.method + ": " + strings.TrimPrefix(e.err.Error(), "client: ")
}

func (e *callError) Unwrap() error { return e.err }
