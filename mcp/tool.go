package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/internal/schema"
	"github.com/mcpkit/mcpkit/internal/wire"
)

// Tool describes a tool as clients see it in tools/list.
type Tool struct {
	// Name identifies the tool: 1 to 128 characters from A-Z, a-z, 0-9,
	// '_', '-' and '.'.
	Name string `json:"name"`
	// Title is an optional display name.
	Title string `json:"title,omitempty"`
	// Description tells a model what the tool does. Required.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments: JSON text (a
	// json.RawMessage, []byte or string, kept verbatim) or any value that
	// encodes to a JSON object with "type": "object". AddTool infers it from
	// the In type when nil.
	InputSchema any `json:"inputSchema"`
	// OutputSchema is the JSON Schema of structuredContent. AddTool infers
	// it from a struct Out type when nil.
	OutputSchema any              `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"`
	Meta         Meta             `json:"_meta,omitempty"`

	// TaskSupport says whether calls may run as tasks of the tasks
	// extension (see TaskSupport). Registering a tool with TaskOptional or
	// TaskRequired turns the extension on: server/discover advertises it,
	// and tasks/get, tasks/update and tasks/cancel are served. Not sent
	// to clients: the server decides per call.
	TaskSupport TaskSupport `json:"-"`

	// Scopes are the OAuth scopes a caller's access token must all grant
	// for the caller to see the tool in tools/list and to call it, on a
	// server with AuthOptions. A call without them gets 403
	// insufficient_scope naming them. Callers without a Principal (stdio)
	// are not checked. Not sent to clients.
	Scopes []string `json:"-"`
}

// ToolAnnotations are hints about a tool's behaviour. Clients must not
// trust them from untrusted servers.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// CallToolResult is the result of a tool call.
type CallToolResult struct {
	// Content is the unstructured result, shown to the model.
	Content []Content
	// StructuredContent is the structured result; it must match the tool's
	// output schema when the tool has one.
	StructuredContent any
	// IsError marks a failed call whose content describes the failure, so
	// that the model can react to it.
	IsError bool
	Meta    Meta
}

// providedBody, as the StructuredContent of a CallToolResult, is the whole
// result object as a Provider answered it (a provided tools/call run as a
// task, providedTool): it is sent in place of the result's fields, without
// the members the server owns.
type providedBody json.RawMessage

// MarshalJSON implements json.Marshaler. The result's _meta is written by
// the server's result encoder, not here.
func (r *CallToolResult) MarshalJSON() ([]byte, error) {
	return appendCallToolResult(nil, r)
}

// ErrNoStructuredContent is returned by DecodeStructured for a result without
// structuredContent.
var ErrNoStructuredContent = errors.New("mcp: the tool result has no structuredContent")

// DecodeStructured decodes the result's StructuredContent into v (a pointer),
// as encoding/json does: the raw JSON the client fills it with
// (json.RawMessage), or any value a handler set, through its JSON encoding.
// A result without structuredContent returns ErrNoStructuredContent. It does
// not modify r.
func (r *CallToolResult) DecodeStructured(v any) error {
	if r == nil || r.StructuredContent == nil {
		return ErrNoStructuredContent
	}
	raw, ok := r.StructuredContent.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(r.StructuredContent); err != nil {
			return fmt.Errorf("mcp: encoding structuredContent: %w", err)
		}
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ErrNoStructuredContent
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("mcp: decoding structuredContent into %T: %w", v, err)
	}
	return nil
}

// ToolRequest is a tools/call request as its handler sees it.
type ToolRequest struct {
	requestBase
	// Info describes the request: the protocol version and era, the client
	// identity, capabilities and log level its _meta declared, and the
	// verified principal.
	Info *RequestInfo
	inputs
	// Name is the tool's name.
	Name string
	// Arguments is the raw arguments object ({} when the call had none).
	Arguments json.RawMessage
}

// ToolHandler is the shape of every typed tool handler. An ordinary error
// becomes a tool result with IsError set and the error's text as content;
// return a *Error for a protocol error instead.
type ToolHandler[In, Out any] func(ctx context.Context, req *ToolRequest, in In) (Out, error)

// RawToolHandler handles calls of a tool registered with AddRawTool.
type RawToolHandler func(ctx context.Context, req *ToolRequest) (*CallToolResult, error)

// toolEntry is a registered tool with everything precomputed.
type toolEntry struct {
	tool    Tool
	encoded []byte
	input   *schema.Validator
	output  *schema.Validator
	headers []paramHeader
	keys    *argKeys // declared argument names, for checkArgKeys
	handler RawToolHandler
}

// AddTool registers a tool whose arguments decode into In and whose result
// is built from Out, on s. The input schema is inferred from In unless
// t.InputSchema is set, and arguments are validated against it before the
// handler runs: invalid arguments become an isError result that says what is
// wrong. Out may be:
//   - *CallToolResult: sent as it is;
//   - string: sent as one text content item;
//   - a struct (or pointer to one): sent as structuredContent, validated
//     against the output schema (inferred unless t.OutputSchema is set), and
//     mirrored as JSON text content;
//   - anything else: sent as JSON text content.
//
// AddTool replaces a tool of the same name. It panics on programmer errors
// (an invalid name, a missing description, a schema that does not compile),
// naming the tool.
func AddTool[In, Out any](s *Server, t *Tool, h ToolHandler[In, Out]) {
	tt := *t
	var pre inferred
	if tt.InputSchema == nil {
		b, v, err := schema.InferCompile(t.Name+"/input", reflect.TypeFor[In]())
		if err != nil {
			panic(fmt.Sprintf("AddTool %q: inferring the input schema: %v", t.Name, err))
		}
		tt.InputSchema, pre.input = json.RawMessage(b), v
	}
	outT := reflect.TypeFor[Out]()
	structured := isStructured(outT)
	if tt.OutputSchema == nil && structured {
		b, v, err := schema.InferCompile(t.Name+"/output", outT)
		if err != nil {
			panic(fmt.Sprintf("AddTool %q: inferring the output schema: %v", t.Name, err))
		}
		tt.OutputSchema, pre.output = json.RawMessage(b), v
	}
	pre.in = reflect.TypeFor[In]()
	dec := newArgDecoder(pre.in)
	s.addTool(&tt, pre, func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) {
		var in In
		if dec == nil || !dec.decode(req.Arguments, reflect.ValueOf(&in).Elem()) {
			in = *new(In) // the fast path may have set some fields
			if err := json.Unmarshal(req.Arguments, &in); err != nil {
				return errorResult("Invalid arguments for tool " + req.Name + ": " + err.Error()), nil
			}
		}
		out, err := h(ctx, req, in)
		if err != nil {
			return nil, err
		}
		if s, ok := any(out).(string); ok {
			return textResult(s), nil // without boxing out
		}
		return toResult(out, structured)
	})
}

// AddRawTool registers a tool with an explicit input schema (t.InputSchema
// is required) and a handler that reads the raw arguments. Arguments are
// validated against the schema before the handler runs. It replaces a tool
// of the same name and panics on programmer errors, naming the tool.
func (s *Server) AddRawTool(t *Tool, h RawToolHandler) {
	if t.InputSchema == nil {
		panic(fmt.Sprintf("AddRawTool %q: missing InputSchema", t.Name))
	}
	tt := *t
	s.addTool(&tt, inferred{}, h)
}

// RemoveTools removes the named tools; unknown names are ignored.
func (s *Server) RemoveTools(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, name := range names {
		if _, ok := s.reg.tools[name]; ok {
			delete(s.reg.tools, name)
			n++
		}
	}
	if n > 0 {
		s.changed(ToolsListChanged)
	}
}

func (s *Server) addTool(t *Tool, pre inferred, h RawToolHandler) {
	if err := checkToolName(t.Name); err != nil {
		panic(fmt.Sprintf("AddTool %q: %v", t.Name, err))
	}
	if t.Description == "" {
		panic(fmt.Sprintf("AddTool %q: missing description", t.Name))
	}
	checkScopes("AddTool", t.Name, t.Scopes)
	t.Scopes = slices.Clone(t.Scopes)
	t.InputSchema = rawSchema(t.InputSchema)
	t.OutputSchema = rawSchema(t.OutputSchema)
	in, err := json.Marshal(t.InputSchema)
	if err != nil {
		panic(fmt.Sprintf("AddTool %q: encoding the input schema: %v", t.Name, err))
	}
	if typ, _ := jsonscan.Lookup(in, "type"); !jsonscan.StringEqual(typ, "object") {
		panic(fmt.Sprintf("AddTool %q: the input schema must have \"type\": \"object\"", t.Name))
	}
	e := &toolEntry{tool: *t, handler: h}
	if e.input = pre.input; e.input == nil {
		if e.input, err = schema.Compile(t.Name+"/input", in); err != nil {
			panic(fmt.Sprintf("AddTool %q: input schema: %v", t.Name, err))
		}
	}
	e.keys = schemaArgKeys(in)
	if pre.in != nil {
		addTypeKeys(e.keys, pre.in, map[reflect.Type]bool{})
	}
	if e.headers, err = paramHeaders(in); err != nil {
		panic(fmt.Sprintf("AddTool %q: x-mcp-header: %v", t.Name, err))
	}
	if t.OutputSchema != nil {
		out, err := json.Marshal(t.OutputSchema)
		if err != nil {
			panic(fmt.Sprintf("AddTool %q: encoding the output schema: %v", t.Name, err))
		}
		if e.output = pre.output; e.output == nil {
			if e.output, err = schema.Compile(t.Name+"/output", out); err != nil {
				panic(fmt.Sprintf("AddTool %q: output schema: %v", t.Name, err))
			}
		}
	}
	if e.encoded, err = json.Marshal(t); err != nil {
		panic(fmt.Sprintf("AddTool %q: encoding: %v", t.Name, err))
	}
	if t.TaskSupport > TaskRequired {
		panic(fmt.Sprintf("AddTool %q: invalid TaskSupport %d", t.Name, t.TaskSupport))
	}
	if t.TaskSupport != TaskNone {
		s.tasks.enable()
	}
	s.mu.Lock()
	s.reg.tools[t.Name] = e
	s.changed(ToolsListChanged)
	s.mu.Unlock()
}

// inferred holds the validators of the schemas AddTool inferred, compiled
// with the inference (schema.InferCompile), nil for schemas given as JSON,
// and the type AddTool decodes arguments into (nil for AddRawTool).
type inferred struct {
	input, output *schema.Validator
	in            reflect.Type
}

// rawSchema lets a schema be given as JSON text in a []byte or string, not
// only as a value that encodes to one.
func rawSchema(v any) any {
	switch v := v.(type) {
	case []byte:
		return json.RawMessage(v)
	case string:
		return json.RawMessage(v)
	}
	return v
}

// checkToolName enforces MCP's tool name rules.
func checkToolName(name string) error {
	if len(name) == 0 || len(name) > 128 {
		return fmt.Errorf("a tool name must have 1 to 128 characters")
	}
	for _, c := range []byte(name) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return fmt.Errorf("a tool name may contain only A-Z, a-z, 0-9, '_', '-' and '.'; %q is not allowed", c)
		}
	}
	return nil
}

func isStructured(t reflect.Type) bool {
	if t == reflect.TypeFor[*CallToolResult]() {
		return false
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

// textResult returns a result of one text content item, in one allocation.
func textResult(text string) *CallToolResult {
	b := &struct {
		r CallToolResult
		c [1]Content
		t TextContent
	}{}
	b.t.Text = text
	b.c[0] = &b.t
	b.r.Content = b.c[:]
	return &b.r
}

// toResult turns a typed handler's output into a CallToolResult.
func toResult(out any, structured bool) (*CallToolResult, error) {
	switch v := out.(type) {
	case *CallToolResult:
		if v == nil {
			return &CallToolResult{}, nil
		}
		return v, nil
	case string:
		return textResult(v), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encoding the tool's output: %w", err)
	}
	r := &CallToolResult{Content: []Content{&TextContent{Text: string(b)}}}
	if structured {
		r.StructuredContent = json.RawMessage(b)
	}
	return r, nil
}

func errorResult(text string) *CallToolResult {
	return &CallToolResult{Content: []Content{&TextContent{Text: text}}, IsError: true}
}

func handleToolsList(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	if x.snap.toolsList == nil {
		return nil, methodNotFound(x.method)
	}
	return x.servePage(ctx, x.snap.toolsList, dst)
}

func handleToolsCall(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	if x.snap.tools == nil {
		return nil, methodNotFound(x.method)
	}
	nameV, _ := x.param("name")
	raw, ok := jsonscan.StringBytes(nameV)
	var name string
	if ok && bytes.IndexByte(raw, '\\') >= 0 {
		name, ok = jsonscan.String(nameV)
	}
	if !ok {
		return nil, InvalidParams("Invalid params: tools/call needs a string name")
	}
	args, ok := x.param("arguments")
	if !ok || jsonscan.Kind(args) == 'n' {
		args = []byte("{}")
	} else if !jsonscan.IsObject(args) {
		return nil, InvalidParams("Invalid params: arguments must be an object")
	}
	t, err := x.lookupTool(ctx, name, raw)
	if err != nil {
		return nil, err
	}
	name = t.tool.Name
	var req *ToolRequest
	p := primitive{kind: kindTool, name: name, scopes: t.tool.Scopes}
	return callPrimitive(ctx, x, dst, p, toolErrorResult, &primitiveCall[*CallToolResult]{
		prepare: func(info *RequestInfo) (*round, []byte, bool, error) {
			if x.era().paramHeaders() && x.info.Header != nil && len(t.headers) > 0 {
				if e := checkParamHeaders(t.headers, args, x.info.Header); e != nil {
					return nil, nil, true, e
				}
			}
			task := t.tool.TaskSupport != TaskNone && info.ClientCapabilities.HasExtension(TasksExtension)
			if !task && t.tool.TaskSupport == TaskRequired {
				return nil, nil, true, missingTasksExtension()
			}
			if msg := t.keys.check(args); msg != "" {
				out, err := x.appendToolResult(dst, name, errorResult("Invalid arguments for tool "+name+": "+msg))
				return nil, out, true, err
			}
			if verr := t.input.ValidateJSON(args); verr != nil { // args were validated with the request
				out, err := x.appendToolResult(dst, name, errorResult("Invalid arguments for tool "+name+": "+verr.Error()))
				return nil, out, true, err
			}
			if task {
				out, err := x.callTask(ctx, t, name, dst)
				return nil, out, true, err
			}
			req = x.newToolRequest()
			*req = ToolRequest{requestBase: requestBase{x: x}, Info: info, Name: name, Arguments: json.RawMessage(args)}
			return &req.rd, nil, false, nil
		},
		run: func(ctx context.Context) (*CallToolResult, error) { return x.invokeTool(ctx, t, req) },
		encode: func(dst []byte, res *CallToolResult) ([]byte, error) {
			return x.appendToolResult(dst, name, res)
		},
	})
}

// lookupTool finds the tool a tools/call names (name, or its unescaped
// bytes raw when name is "") and the caller may see; it answers
// kindTool.notFound otherwise.
func (x *exchange) lookupTool(ctx context.Context, name string, raw []byte) (*toolEntry, error) {
	var t *toolEntry
	if name == "" {
		// No escapes: look the tool up without copying its name.
		if t = x.snap.tools[string(raw)]; t == nil {
			name = string(raw)
		}
	} else {
		t = x.snap.tools[name]
	}
	if t == nil {
		return nil, kindTool.notFound(name)
	}
	if ok, err := x.visible(ctx, t); err != nil || !ok {
		return nil, orError(err, kindTool.notFound(t.tool.Name))
	}
	return t, nil
}

// invokeTool runs a tool's handler. An ordinary error becomes an isError
// result, and so does a structured result that does not match the output
// schema; protocol errors (a *Error), requests for input (*InputRequired)
// and cancellation are returned.
func (x *exchange) invokeTool(ctx context.Context, t *toolEntry, req *ToolRequest) (*CallToolResult, error) {
	res, err := t.handler(ctx, req)
	if err != nil {
		if res, err = settleError(ctx, primitive{kind: kindTool, name: req.Name}, toolErrorResult, err); err != nil {
			return nil, err
		}
	} else if res == nil {
		res = &CallToolResult{}
	}
	if t.output != nil && !res.IsError {
		if verr := validateStructured(t.output, res.StructuredContent); verr != nil {
			x.s.log.Error("mcp: tool output does not match its output schema", "tool", req.Name, "err", verr)
			res = errorResult("Tool " + req.Name + " produced output that does not match its output schema: " + verr.Error())
		}
	}
	return res, nil
}

// appendToolResult appends the response carrying a tool's result.
func (x *exchange) appendToolResult(dst []byte, name string, res *CallToolResult) ([]byte, error) {
	buf := x.s.getBuf()
	defer x.s.putBuf(buf)
	body, meta, err := encodeToolResult(*buf, res, name)
	*buf = body[:0]
	if err != nil {
		return nil, err
	}
	return x.appendResult(dst, resultComplete, false, body, meta), nil
}

// encodeToolResult appends a tool result's own members to dst as a JSON
// object, and encodes its _meta.
func encodeToolResult(dst []byte, res *CallToolResult, name string) (body, meta []byte, err error) {
	if pb, ok := res.StructuredContent.(providedBody); ok {
		b, m, err := splitResult(json.RawMessage(pb))
		if err != nil {
			return dst, nil, fmt.Errorf("the result of tool %q: %w", name, err)
		}
		return append(dst, b...), m, nil
	}
	body, err = appendCallToolResult(dst, res)
	if err != nil {
		return body, nil, fmt.Errorf("encoding the result of tool %q: %w", name, err)
	}
	if len(res.Meta) > 0 {
		if meta, err = json.Marshal(res.Meta); err != nil {
			return body, nil, fmt.Errorf("encoding the _meta of tool %q: %w", name, err)
		}
	}
	return body, meta, nil
}

func validateStructured(v *schema.Validator, sc any) error {
	if sc == nil {
		return fmt.Errorf("structuredContent is missing")
	}
	b, ok := sc.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(sc); err != nil {
			return err
		}
	}
	return v.Validate(b)
}

// paramHeader is one x-mcp-header annotation of an input schema.
type paramHeader struct {
	header string   // canonical header key, "Mcp-Param-Region"
	path   []string // chain of properties keys
	typ    string   // "string", "integer" or "boolean"
}

// paramHeaders finds and checks the x-mcp-header annotations of an input
// schema, by the rules of the Streamable HTTP transport.
func paramHeaders(schemaJSON []byte) ([]paramHeader, error) {
	var root any
	d := json.NewDecoder(bytes.NewReader(schemaJSON))
	d.UseNumber()
	if err := d.Decode(&root); err != nil {
		return nil, err
	}
	var out []paramHeader
	seen := map[string]bool{}
	// Reachable annotations: walk properties chains only.
	var walkProps func(node map[string]any, path []string) error
	walkProps = func(node map[string]any, path []string) error {
		props, _ := node["properties"].(map[string]any)
		for key, p := range props {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			ppath := append(append([]string(nil), path...), key)
			if hv, ok := pm["x-mcp-header"]; ok {
				name, ok := hv.(string)
				if !ok || !wire.IsToken(name) {
					return fmt.Errorf("property %q: the value must be a non-empty HTTP token", strings.Join(ppath, "."))
				}
				low := strings.ToLower(name)
				if seen[low] {
					return fmt.Errorf("property %q: header name %q is used twice", strings.Join(ppath, "."), name)
				}
				seen[low] = true
				typ, _ := pm["type"].(string)
				if typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("property %q: x-mcp-header needs type string, integer or boolean", strings.Join(ppath, "."))
				}
				out = append(out, paramHeader{header: canonicalHeader(protocol.HeaderParamPrefix + name), path: ppath, typ: typ})
			}
			if err := walkProps(pm, ppath); err != nil {
				return err
			}
		}
		return nil
	}
	if m, ok := root.(map[string]any); ok {
		if err := walkProps(m, nil); err != nil {
			return nil, err
		}
	}
	// Every annotation must be one of the reachable ones.
	total := 0
	var count func(v any)
	count = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["x-mcp-header"]; ok {
				total++
			}
			for _, e := range v {
				count(e)
			}
		case []any:
			for _, e := range v {
				count(e)
			}
		}
	}
	count(root)
	if total != len(out) {
		return nil, fmt.Errorf("an x-mcp-header annotation is not reachable from the root through properties alone")
	}
	return out, nil
}

// canonicalHeader canonicalizes a header key as net/http does.
func canonicalHeader(k string) string {
	b := []byte(k)
	upper := true
	for i, c := range b {
		if upper && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		} else if !upper && c >= 'A' && c <= 'Z' {
			b[i] = c - 'A' + 'a'
		}
		upper = c == '-'
	}
	return string(b)
}
