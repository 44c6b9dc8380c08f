package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// MethodRequest is what the handler of a custom method (AddMethod)
// receives. Like the other request types, it can report progress, log, and
// ask the client for input (Elicit, Sample, ListRoots).
type MethodRequest struct {
	requestBase
	// Info describes the request: the protocol version and era, the client
	// identity, capabilities and log level its _meta declared, and the
	// verified principal.
	Info *RequestInfo
	inputs
	// Method is the method's name.
	Method string
	// Params is the raw params object of the request, _meta included; nil
	// when the request had none. It is valid until the handler returns.
	Params json.RawMessage
}

// MethodHandler serves a custom method. It returns the result (any value
// that encodes as a JSON object; a json.RawMessage is sent as it is, nil
// as {}) or an error: a *Error (InvalidParams, say) is sent as that
// protocol error, an InputRequired error asks the client for input as it
// does for tools, and any other error becomes an internal error (-32603)
// that is logged and not shown to the client.
type MethodHandler func(ctx context.Context, req *MethodRequest) (any, error)

// MethodOptions configures a custom method. The zero value serves the
// method in both eras, without an Mcp-Name header and without declaring an
// extension.
type MethodOptions struct {
	// NameParam names the top-level params member (such as "name" or
	// "uri") that the Mcp-Name header mirrors on Streamable HTTP, checked
	// like the core methods' (-32020 on a mismatch), and that interceptors
	// see as Call.Name. "" means no Mcp-Name header.
	NameParam string
	// Extension, when not empty, is the extension identifier the method
	// belongs to: server/discover then declares it under
	// capabilities.extensions, with ExtensionSettings (nil sends {}). Two
	// methods of one extension should carry the same settings (when they
	// differ, the method whose name sorts last wins); ServerOptions.Extensions
	// overrides both.
	Extension         string
	ExtensionSettings any
	// DisableLegacy keeps the method out of legacy sessions, which then get
	// -32601 for it.
	DisableLegacy bool
}

// customMethod is a registered custom method.
type customMethod struct {
	name    string
	handler MethodHandler
	opts    MethodOptions
	h       methodHandler // serve, as a method value made once
}

// reservedMethods are the methods of the protocol that AddMethod cannot
// replace, besides those of the methods and legacyMethods tables.
var reservedMethods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true,
	"elicitation/create": true, "sampling/createMessage": true, "roots/list": true,
}

// AddMethod registers a handler for a method the core does not serve, for
// an extension: requests for it are validated like any other (_meta,
// version, headers), go through the interceptors, and have their errors
// mapped as the core's are; results get resultType "complete" and the
// serverInfo _meta (in a legacy session, the 2025-11-25 shape). opts may
// be nil. Registering the same method again replaces it.
//
// It panics, naming the method, when method is empty, starts with
// "notifications/", or is one of the protocol's own methods (a programmer
// error). It is safe for concurrent use, also while serving.
func (s *Server) AddMethod(method string, h MethodHandler, opts *MethodOptions) {
	switch {
	case method == "":
		panic("mcp.AddMethod: empty method name")
	case h == nil:
		panic("mcp.AddMethod " + strconv.Quote(method) + ": nil handler")
	case strings.HasPrefix(method, "notifications/"):
		panic("mcp.AddMethod " + strconv.Quote(method) + ": notifications are not methods")
	case reservedMethods[method] || methods[method] != nil || legacyMethods[method] != nil:
		panic("mcp.AddMethod " + strconv.Quote(method) + ": a method of the protocol itself")
	}
	cm := &customMethod{name: method, handler: h}
	if opts != nil {
		cm.opts = *opts
	}
	cm.h = cm.serve
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reg.custom == nil {
		s.reg.custom = map[string]*customMethod{}
	}
	s.reg.custom[method] = cm
	s.snap.Store(nil)
}

// RemoveMethod removes a custom method registered with AddMethod; later
// requests for it get -32601. It is safe for concurrent use.
func (s *Server) RemoveMethod(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.reg.custom[method]; ok {
		delete(s.reg.custom, method)
		s.snap.Store(nil)
	}
}

// customHandler returns the handler of a custom method for a request of
// era w.
func (sn *snapshot) customHandler(method string, w era) (methodHandler, bool) {
	cm := sn.custom[method]
	if cm == nil || !w.serves(&cm.opts) {
		return nil, false
	}
	return cm.h, true
}

// serve runs a custom method's handler through the call skeleton and
// encodes its result. (Lookup is snapshot.customHandler, at dispatch.)
func (cm *customMethod) serve(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	var req *MethodRequest
	return callPrimitive(ctx, x, dst, primitive{kind: kindMethod, name: cm.name}, nil, &primitiveCall[any]{
		prepare: func(info *RequestInfo) (*round, []byte, bool, error) {
			req = &MethodRequest{requestBase: requestBase{x: x}, Info: info, Method: cm.name}
			if len(x.params) > 0 {
				req.Params = json.RawMessage(x.params)
			}
			return &req.rd, nil, false, nil
		},
		run:    func(ctx context.Context) (any, error) { return cm.handler(ctx, req) },
		encode: func(dst []byte, res any) ([]byte, error) { return x.appendMethodResult(dst, cm.name, res) },
	})
}

// appendMethodResult appends the response carrying res, the result of the
// custom method name: nil is {}, a json.RawMessage is sent as it is, and
// anything else is encoded with encoding/json; it must be a JSON object.
func (x *exchange) appendMethodResult(dst []byte, name string, res any) ([]byte, error) {
	var (
		body []byte
		err  error
	)
	switch r := res.(type) {
	case nil:
		body = []byte("{}")
	case json.RawMessage:
		body = r
	default:
		if body, err = json.Marshal(res); err != nil {
			return nil, fmt.Errorf("method %q: encoding the result: %w", name, err)
		}
	}
	if len(body) == 0 || body[0] != '{' {
		return nil, fmt.Errorf("method %q: the result is not a JSON object", name)
	}
	return x.appendResult(dst, resultComplete, false, body, nil), nil
}

// customExtensions adds the extensions the custom methods declare to ext
// (which may be nil) and returns it.
func (r *registry) customExtensions(ext map[string]json.RawMessage) map[string]json.RawMessage {
	for _, name := range slices.Sorted(maps.Keys(r.custom)) {
		cm := r.custom[name]
		if cm.opts.Extension == "" {
			continue
		}
		if ext == nil {
			ext = map[string]json.RawMessage{}
		}
		if cm.opts.ExtensionSettings == nil {
			if _, ok := ext[cm.opts.Extension]; !ok {
				ext[cm.opts.Extension] = json.RawMessage("{}")
			}
		} else {
			ext[cm.opts.Extension] = mustMarshal(cm.opts.ExtensionSettings)
		}
	}
	return ext
}
