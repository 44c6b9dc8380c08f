package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// This file is the provider seam: a Server whose tools, prompts, resources,
// resource templates and completions come from somewhere other than its
// registry (a backend server, for the bridge package), answered per request.
// The hooks in the lookup paths (handle.go, legacy.go, intercept.go) call
// snapshot.provided; everything else (validation, interceptors, the eras,
// input_required, the encoder) is the core's.

// Provider answers the feature methods of a Server per request, in place of
// its registry (ServerOptions.Provider): tools/list, tools/call,
// prompts/list, prompts/get, resources/list, resources/templates/list,
// resources/read and completion/complete (ProvidedMethods). Items a
// Provider serves never go through AddTool and friends: their schemas and
// descriptions pass through verbatim, and the Provider (or its backend)
// validates the arguments.
//
// Provide receives the validated request (req.Info holds the caller's
// version, capabilities and log level; req.Params the raw params) and
// returns the result, or an error mapped as a custom method's is: a *Error
// is sent as it is, an *InputRequired (from req.RequestInput, Elicit, Sample
// or ListRoots, on tools/call, prompts/get and resources/read) answers
// input_required, and any other error is an internal error that is logged,
// not sent. It is called concurrently and must be safe for that.
type Provider interface {
	Provide(ctx context.Context, req *MethodRequest) (*ProvidedResult, error)
}

// ProviderFunc adapts a function to the Provider interface.
type ProviderFunc func(ctx context.Context, req *MethodRequest) (*ProvidedResult, error)

// Provide calls f.
func (f ProviderFunc) Provide(ctx context.Context, req *MethodRequest) (*ProvidedResult, error) {
	return f(ctx, req)
}

// ProvidedResult is a Provider's answer to one request.
type ProvidedResult struct {
	// Body is the result object (a JSON object) without resultType, cache
	// hints and serverInfo, which the server adds; a member of those names
	// in Body is dropped. Its _meta members, if any, are kept next to the
	// server's serverInfo. Nil is sent as {}.
	Body json.RawMessage
	// Cache, when not nil, makes the result carry cache hints (list
	// methods): its TTL and Scope, zero values taking ServerOptions.Cache.
	// A list whose content depends on the caller (its capabilities, its
	// principal) should say CachePrivate.
	Cache *CacheHint
	// InputRequired marks Body as an input_required result made elsewhere
	// (by the replica that holds the call, for a bridge): its inputRequests
	// and requestState are sent as they are, with resultType
	// "input_required". Only the modern era can carry it; a legacy request
	// gets an internal error.
	InputRequired bool
}

// CacheHint is the caching hint of one result.
type CacheHint struct {
	// TTL is how long the result may be reused; 0 means
	// ServerOptions.Cache.TTL, Off means 0 ms.
	TTL time.Duration
	// Scope is CachePublic or CachePrivate; "" means
	// ServerOptions.Cache.Scope.
	Scope CacheScope
}

// ProvidedMethods are the methods a Provider serves.
var ProvidedMethods = []string{
	"tools/list", "tools/call", "prompts/list", "prompts/get",
	"resources/list", "resources/templates/list", "resources/read",
	"completion/complete",
}

// providedSet is ProvidedMethods as a set.
var providedSet = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range ProvidedMethods {
		m[k] = true
	}
	return m
}()

// provided returns the provider's handler for method, when the server has a
// Provider and method is one of ProvidedMethods.
func (sn *snapshot) provided(method string) (methodHandler, bool) {
	if sn.provider == nil || !providedSet[method] {
		return nil, false
	}
	return sn.provider, true
}

// serveProvided runs the Provider for one request, on the primitive-call
// skeleton (call.go), and encodes its result.
func serveProvided(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	var req *MethodRequest
	return callPrimitive(ctx, x, dst, primitive{kind: kindMethod, name: x.method}, nil, &primitiveCall[*ProvidedResult]{
		prepare: func(info *RequestInfo) (*round, []byte, bool, error) {
			if tp, ok := x.s.opts.Provider.(TaskProvider); ok && x.method == "tools/call" {
				if out, done, err := x.provideTask(ctx, tp, info, dst); done {
					return nil, out, true, err
				}
			}
			req = &MethodRequest{requestBase: requestBase{x: x}, Info: info, Method: x.method}
			if len(x.params) > 0 {
				req.Params = json.RawMessage(x.params)
			}
			return &req.rd, nil, false, nil
		},
		run:    func(ctx context.Context) (*ProvidedResult, error) { return x.s.opts.Provider.Provide(ctx, req) },
		encode: x.appendProvided,
	})
}

// TaskProvider is a Provider whose tools/call may run as tasks of the
// tasks extension (see docs/tasks.md), as a registered tool with
// TaskSupport does: a server whose Provider implements it serves the
// extension (tasks/get, tasks/update, tasks/cancel) and advertises it. A
// call that becomes a task runs Provide in the background, with a context
// that tasks/cancel and Server.Shutdown cancel; its progress becomes the
// task's status message, and its input requests (RequestInput and the
// like) park the task in input_required. After tasks/update answered them,
// Provide runs again with the answers and the state it saved (SaveState),
// on the server that received the last answer, as a retried multi
// round-trip request does; there req.Info.Header is nil.
type TaskProvider interface {
	Provider
	// ToolTaskSupport says whether calls of the tool name may run as
	// tasks: TaskNone, TaskOptional or TaskRequired, with the meanings
	// they have for Tool.TaskSupport. It is called for every tools/call,
	// concurrently, and must be quick.
	ToolTaskSupport(name string) TaskSupport
}

// TaskAdmitter is implemented by a TaskProvider that checks a caller
// before its tools/call may become a task (the gateway checks the OAuth
// scopes a backend's tool needs): AdmitTask is called for every
// tools/call of a tool whose ToolTaskSupport is TaskOptional or
// TaskRequired, with the caller's request info, before the call is run or
// a task made. An error answers the call as it is (an *Error with its
// code, InsufficientScope with HTTP 403 and its challenge), and no task is
// made; nil lets the call go on. It is not called again when a task
// resumes after tasks/update. It is called concurrently and must be quick.
type TaskAdmitter interface {
	AdmitTask(ctx context.Context, info *RequestInfo, name string) error
}

// provideTask runs a provided tools/call through the task machinery when
// the provider says the tool may run as a task and the caller declared the
// extension (done), or answers -32021 for a TaskRequired tool of a caller
// that did not, or the error of the provider's TaskAdmitter; otherwise it leaves the call to the ordinary path.
func (x *exchange) provideTask(ctx context.Context, tp TaskProvider, info *RequestInfo, dst []byte) (out []byte, done bool, err error) {
	nameV, _ := x.param("name")
	name, ok := jsonscan.String(nameV)
	if !ok {
		return nil, true, InvalidParams("Invalid params: tools/call needs a string name")
	}
	support := tp.ToolTaskSupport(name)
	if ta, ok := tp.(TaskAdmitter); ok && support != TaskNone {
		if err := ta.AdmitTask(ctx, info, name); err != nil {
			return nil, true, err
		}
	}
	task := support != TaskNone && info.ClientCapabilities.HasExtension(TasksExtension)
	if !task {
		if support == TaskRequired {
			return nil, true, missingTasksExtension()
		}
		return nil, false, nil
	}
	out, err = x.callTask(ctx, providedTool(tp, name, support), name, dst)
	return out, true, err
}

// providedTool returns the tool entry a provided tools/call runs as a task
// with: its handler calls the provider with a MethodRequest that takes
// over the ToolRequest's input round for the call (the task machinery
// reads the round once the handler returned).
func providedTool(p Provider, name string, support TaskSupport) *toolEntry {
	return &toolEntry{tool: Tool{Name: name, TaskSupport: support}, handler: func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) {
		x := req.x
		mr := &MethodRequest{requestBase: req.requestBase, Info: req.Info, Method: "tools/call"}
		if len(x.params) > 0 {
			mr.Params = json.RawMessage(x.params)
		}
		mr.rd.moveFrom(&req.rd)
		res, err := p.Provide(ctx, mr)
		req.rd.moveFrom(&mr.rd)
		if err != nil {
			return nil, err
		}
		if res == nil {
			res = &ProvidedResult{}
		}
		if res.InputRequired {
			return nil, &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: a relayed input_required result cannot answer a call that may run as a task"}
		}
		body := res.Body
		if len(body) == 0 {
			body = json.RawMessage("{}")
		}
		if jsonscan.Kind(body) != '{' {
			return nil, fmt.Errorf("provider tools/call %q: the result is not a JSON object", name)
		}
		isErr, _ := jsonscan.Lookup(body, "isError")
		return &CallToolResult{IsError: string(isErr) == "true", StructuredContent: providedBody(body)}, nil
	}}
}

// appendProvided appends the response carrying a Provider's result.
func (x *exchange) appendProvided(dst []byte, res *ProvidedResult) ([]byte, error) {
	if res == nil {
		res = &ProvidedResult{}
	}
	body, meta, err := splitResult(res.Body)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", x.method, err)
	}
	if res.InputRequired {
		if x.info.Era != EraModern {
			return nil, fmt.Errorf("provider %s: a relayed input_required result cannot reach a legacy client", x.method)
		}
		return x.appendResultHint(dst, resultInputRequired, nil, body, meta), nil
	}
	var hint []byte
	if res.Cache != nil && x.era().cacheHints() {
		hint = x.s.appendHint(nil, res.Cache.TTL, res.Cache.Scope)
	}
	return x.appendResultHint(dst, resultComplete, hint, body, meta), nil
}

// resultOwned are the members of a result object the server writes itself.
var resultOwned = []string{"resultType", "ttlMs", "cacheScope", "_meta"}

// splitResult splits a provider's result object into its body without the
// members the server owns, and its _meta object without serverInfo (nil
// when it has no other member).
func splitResult(raw json.RawMessage) (body, meta []byte, err error) {
	if len(raw) == 0 {
		return []byte("{}"), nil, nil
	}
	if jsonscan.Kind(raw) != '{' {
		return nil, nil, errors.New("the result is not a JSON object")
	}
	owned := false
	it, _ := jsonscan.Object(raw)
	var mem jsonscan.Member
	for !owned && it.NextKey(&mem) { // one pass over the body, values skipped
		for _, k := range resultOwned {
			owned = owned || mem.KeyIs(k)
		}
	}
	if !owned {
		return raw, nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, fmt.Errorf("the result is not a JSON object: %w", err)
	}
	if mv, ok := m["_meta"]; ok {
		var mm map[string]json.RawMessage
		if json.Unmarshal(mv, &mm) == nil {
			delete(mm, protocol.MetaServerInfo)
			if len(mm) > 0 {
				meta, _ = json.Marshal(mm)
			}
		}
	}
	for _, k := range resultOwned {
		delete(m, k)
	}
	body, err = json.Marshal(m)
	return body, meta, err
}

// RequestInput asks the client for the input request method (one of
// "elicitation/create", "sampling/createMessage" and "roots/list") with
// params passed verbatim, under key, and returns the client's raw answer
// once it came. Until then it returns an *InputRequired error that the
// handler must return, as Elicit does. It is for handlers that relay input
// requests of another server (the bridge): the answer is checked only for
// being a JSON object, and the capability check follows the method (and,
// for elicitation, params.mode; for sampling, params.tools, toolChoice and
// includeContext). It is safe for concurrent use.
func (r *inputs) RequestInput(key, method string, params json.RawMessage) (json.RawMessage, error) {
	var m byte
	switch method {
	case "elicitation/create":
		m = inputElicit
	case "sampling/createMessage":
		m = inputSample
	case "roots/list":
		m = inputRoots
	default:
		return nil, r.bug(fmt.Errorf("input request %q: unknown method %q", key, method))
	}
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	var perr error
	if jsonscan.Kind(params) != '{' {
		perr = errors.New("params is not a JSON object")
	}
	var out json.RawMessage
	err := r.resolve(key, m, params, perr, func(c *ClientCapabilities) *Error {
		return missingFor(c, m, params)
	}, func(raw []byte) error {
		out = append(json.RawMessage(nil), raw...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// missingFor returns the -32021 error of an input request of method m with
// params that the capabilities c do not allow, or nil.
func missingFor(c *ClientCapabilities, m byte, params []byte) *Error {
	has := func(k string) bool {
		v, ok := jsonscan.Lookup(params, k)
		return ok && jsonscan.Kind(v) != 'n'
	}
	switch m {
	case inputElicit:
		mode := ElicitModeForm
		if v, ok := jsonscan.Lookup(params, "mode"); ok {
			if s, ok := jsonscan.String(v); ok && s == string(ElicitModeURL) {
				mode = ElicitModeURL
			}
		}
		if c.CanElicit(mode) {
			return nil
		}
		need := ClientCapabilities{Elicitation: &ElicitationCapability{}}
		if mode == ElicitModeURL {
			need.Elicitation.URL = json.RawMessage("{}")
		}
		return MissingCapability(need)
	case inputSample:
		if c.Sampling == nil {
			return MissingCapability(ClientCapabilities{Sampling: &SamplingCapability{}})
		}
		if (has("tools") || has("toolChoice")) && c.Sampling.Tools == nil {
			return MissingCapability(ClientCapabilities{Sampling: &SamplingCapability{Tools: json.RawMessage("{}")}})
		}
		if v, ok := jsonscan.Lookup(params, "includeContext"); ok {
			if s, _ := jsonscan.String(v); (s == "thisServer" || s == "allServers") && c.Sampling.Context == nil {
				return MissingCapability(ClientCapabilities{Sampling: &SamplingCapability{Context: json.RawMessage("{}")}})
			}
		}
	case inputRoots:
		if c.Roots == nil {
			return MissingCapability(ClientCapabilities{Roots: &RootsCapability{}})
		}
	}
	return nil
}

// Advertisement is what a server declares about itself, set with
// Server.Advertise in place of what its registrations imply.
type Advertisement struct {
	// Capabilities replaces the capabilities the registry implies
	// (tools, prompts, resources, completions, logging, experimental).
	// The extensions of custom methods, of tools with TaskSupport and of
	// ServerOptions.Extensions are still added. A subscriptions/listen
	// acknowledgement grants only the list changes and resource updates
	// these capabilities declare (listChanged, resources.subscribe).
	Capabilities ServerCapabilities
	// Instructions, when not empty, replaces ServerOptions.Instructions.
	Instructions string
	// Info, when not nil, replaces ServerOptions.Info: the serverInfo of
	// every later result's _meta (server/discover's included) and of a
	// legacy initialize. A bridge takes it from its backend, which may
	// change it when it restarts.
	Info *Implementation
}

// Advertise sets what server/discover (and a legacy initialize) declare,
// in place of what the registrations imply; nil goes back to the
// registrations (and ServerOptions.Info). It is for servers whose features
// come from a Provider.
// The Advertisement is copied. It is safe for concurrent use, also while
// serving: later requests see the new declaration.
func (s *Server) Advertise(a *Advertisement) {
	var c *Advertisement
	if a != nil {
		c = &Advertisement{Capabilities: a.Capabilities, Instructions: a.Instructions}
		c.Capabilities.Experimental = maps.Clone(a.Capabilities.Experimental)
		c.Capabilities.Extensions = maps.Clone(a.Capabilities.Extensions)
	}
	info := s.opts.Info
	if a != nil && a.Info != nil {
		info = *a.Info
		c.Info = &info
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setIdentity(info)
	s.advert = c
	s.snap.Store(nil)
}

// advertise applies the Advertisement (if any) to a snapshot being built:
// the capabilities, and which changes listen streams may ask for.
func (sn *snapshot) advertise(a *Advertisement, listen bool) {
	if a == nil {
		return
	}
	sn.advertised = true
	ext := sn.caps.Extensions
	sn.caps = a.Capabilities
	if len(ext) > 0 {
		merged := maps.Clone(a.Capabilities.Extensions)
		if merged == nil {
			merged = map[string]json.RawMessage{}
		}
		maps.Copy(merged, ext)
		sn.caps.Extensions = merged
	}
	sn.listenKinds = 0
	if !listen {
		return
	}
	c := &sn.caps
	if c.Tools != nil && c.Tools.ListChanged {
		sn.listenKinds |= 1 << ToolsListChanged
	}
	if c.Prompts != nil && c.Prompts.ListChanged {
		sn.listenKinds |= 1 << PromptsListChanged
	}
	if c.Resources != nil && c.Resources.ListChanged {
		sn.listenKinds |= 1 << ResourcesListChanged
	}
	if c.Resources != nil && c.Resources.Subscribe {
		sn.listenKinds |= 1 << ResourceUpdated
	}
}

// NotifyListChanged publishes a list change of kind k (ToolsListChanged,
// PromptsListChanged or ResourcesListChanged) on the Bus, for servers whose
// lists come from a Provider: the registry cannot know that they changed.
// It is safe for concurrent use.
func (s *Server) NotifyListChanged(k ChangeKind) {
	if k < ToolsListChanged || k > ResourcesListChanged {
		return
	}
	s.bus.Publish(Change{Kind: k})
}

// NotifyChange publishes c on the Bus: a list change of kind
// ToolsListChanged, PromptsListChanged or ResourcesListChanged, or a
// ResourceUpdated change with its URI, for every listener or, with
// c.Scope, for one principal's listeners only (NotifyListChanged and
// NotifyResourceUpdated publish unscoped changes). Other changes are
// ignored: task changes are the server's own. It returns without waiting
// for delivery and is safe for concurrent use.
func (s *Server) NotifyChange(c Change) {
	switch {
	case c.Kind >= ToolsListChanged && c.Kind <= ResourcesListChanged:
		c.URI, c.TaskID = "", ""
	case c.Kind == ResourceUpdated && c.URI != "":
		c.TaskID = ""
	default:
		return
	}
	s.bus.Publish(c)
}

// ReadyFunc adapts a function to the ReadyChecker interface, for
// ServerOptions.ReadyChecks.
type ReadyFunc func(ctx context.Context) error

// Ready calls f.
func (f ReadyFunc) Ready(ctx context.Context) error { return f(ctx) }

// Unavailable returns the error of a request the server cannot serve right
// now but another replica, or a later retry, may: JSON-RPC -32603 with
// message msg, sent with HTTP status 503 and a Retry-After header.
func Unavailable(msg string) *Error {
	return &Error{Code: jsonrpc.CodeInternalError, Message: msg, status: http.StatusServiceUnavailable}
}

// CheckParamHeaders checks the request's Mcp-Param-* headers against the
// x-mcp-header parameters of inputSchema (a tool's input schema, as a
// Provider's backend lists it) and the request's arguments, as the server
// does for its registered tools: a mismatch is a -32020 *Error (HTTP 400).
// It does nothing outside Streamable HTTP's modern era, and for a schema
// without annotations or that it cannot read (the backend validates).
func (r *MethodRequest) CheckParamHeaders(inputSchema json.RawMessage) error {
	x := r.x
	if x == nil || x.info.Header == nil || !x.era().paramHeaders() || len(inputSchema) == 0 {
		return nil
	}
	hs, err := paramHeaders(inputSchema)
	if err != nil || len(hs) == 0 {
		return nil
	}
	args, _ := x.param("arguments")
	if e := checkParamHeaders(hs, args, x.info.Header); e != nil {
		return e
	}
	return nil
}
