package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/schema"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// This file implements multi round-trip requests (MRTR): a tools/call,
// prompts/get or resources/read handler that needs input from the client
// (elicitation, sampling, roots) asks for it with the methods of its
// request (Elicit, Sample, ListRoots). Without an answer the method records
// the input request and returns an *InputRequired error; the handler
// returns that error, and the server answers with an input_required result
// listing every input request of the round and a sealed requestState. The
// client retries the request with inputResponses and the requestState; the
// handler runs again from the start, and this time the same calls return
// the answers. Answers used in one round are carried to the later rounds
// inside the sealed requestState, so a handler reads top to bottom like
// straight-line code however many rounds it takes.

// InputRequired is the error that Elicit, Sample and ListRoots return when
// the client has not answered the input request yet. A handler returns it,
// as it is or wrapped (errors.Join of several is fine); the server then
// answers with an input_required result that carries every input request
// the handler made in this run, so several questions can be asked in one
// round by making all the calls before returning.
//
// A handler may also return a new &InputRequired{} itself: the result then
// carries the requests made so far, or only the requestState when there
// are none, which asks the client to retry the request as it is.
type InputRequired struct {
	// Keys names the unanswered input requests this error stands for.
	Keys []string
}

func (e *InputRequired) Error() string {
	if len(e.Keys) == 0 {
		return "mcp: input required"
	}
	return "mcp: input required: " + strings.Join(e.Keys, ", ")
}

// ElicitMode is the mode of an elicitation request.
type ElicitMode string

// Elicitation modes.
const (
	// ElicitModeForm asks the user to fill in a form described by a
	// restricted JSON Schema; the answer passes through the client.
	ElicitModeForm ElicitMode = "form"
	// ElicitModeURL sends the user to a URL for an interaction that must not
	// pass through the client (credentials, payments, third-party sign-in).
	ElicitModeURL ElicitMode = "url"
)

// ElicitAction is the user's response to an elicitation.
type ElicitAction string

// Elicitation actions.
const (
	ElicitAccept  ElicitAction = "accept"  // the user submitted or confirmed
	ElicitDecline ElicitAction = "decline" // the user explicitly declined
	ElicitCancel  ElicitAction = "cancel"  // the user dismissed the request
)

// ElicitParams is an elicitation/create request.
type ElicitParams struct {
	// Mode is ElicitModeForm (the default when empty) or ElicitModeURL.
	Mode ElicitMode
	// Message tells the user why the input is needed. Required.
	Message string
	// RequestedSchema is the form (form mode): a flat JSON Schema object
	// with primitive properties, as any value that encodes to one
	// (json.RawMessage keeps it verbatim). Nil means a form with no fields,
	// which is a plain confirmation.
	RequestedSchema any
	// URL is the page the user should open (URL mode). Required in URL mode.
	URL  string
	Meta Meta
}

// ElicitResult is the client's answer to an elicitation.
type ElicitResult struct {
	// Action is what the user did.
	Action ElicitAction
	// Content holds the submitted form values when Action is ElicitAccept in
	// form mode: strings, float64 numbers, booleans and []any of strings.
	// It has been validated against the requested schema.
	Content map[string]any

	raw json.RawMessage
}

// Accepted reports whether the user accepted (submitted) the elicitation.
func (r *ElicitResult) Accepted() bool { return r.Action == ElicitAccept }

// Decode decodes the submitted form values into v, typically a pointer to a
// struct whose fields match the requested schema's properties.
func (r *ElicitResult) Decode(v any) error {
	raw := r.raw
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	return json.Unmarshal(raw, v)
}

// CreateMessageParams is a sampling/createMessage request: a request that
// the client's language model generate a message. Sampling is deprecated in
// revision 2026-07-28; prefer calling a model provider directly.
type CreateMessageParams struct {
	// Messages is the conversation to continue. Required.
	Messages []SamplingMessage `json:"messages"`
	// MaxTokens bounds the length of the generation. Required, > 0.
	MaxTokens int `json:"maxTokens"`
	// SystemPrompt is an optional system prompt; the client may change or
	// omit it.
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	// IncludeContext is "none", or the deprecated "thisServer" or
	// "allServers", which need the client's sampling.context capability.
	IncludeContext string `json:"includeContext,omitempty"`
	// Metadata is passed through to the model provider.
	Metadata any  `json:"metadata,omitempty"`
	Meta     Meta `json:"_meta,omitempty"`
}

// SamplingMessage is one message of a sampling conversation. Content holds
// *TextContent, *ImageContent or *AudioContent items.
type SamplingMessage struct {
	Role    Role
	Content []Content
	Meta    Meta
}

// MarshalJSON implements json.Marshaler. One content item is sent as a
// single object, several as an array.
func (m SamplingMessage) MarshalJSON() ([]byte, error) {
	var content any = m.Content
	if len(m.Content) == 1 {
		content = m.Content[0]
	}
	return json.Marshal(struct {
		Role    Role `json:"role"`
		Content any  `json:"content"`
		Meta    Meta `json:"_meta,omitempty"`
	}{m.Role, content, m.Meta})
}

// ModelPreferences are the server's advisory preferences for the model the
// client samples with. Priorities range from 0 to 1.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model or model family, such as "claude-3-sonnet".
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// CreateMessageResult is the message the client's model generated.
type CreateMessageResult struct {
	Role Role
	// Content holds *TextContent, *ImageContent and *AudioContent items.
	Content []Content
	// Model names the model that generated the message.
	Model string
	// StopReason is why generation stopped: "endTurn", "stopSequence",
	// "maxTokens", or a provider-specific reason.
	StopReason string
	Meta       Meta
}

// Text returns the text of the message's text content items, joined by
// newlines.
func (r *CreateMessageResult) Text() string {
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Root is a directory or file the client lets the server operate on.
type Root struct {
	// URI identifies the root; a file:// URI.
	URI string `json:"uri"`
	// Name is an optional display name.
	Name string `json:"name,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ListRootsResult is the client's answer to roots/list.
type ListRootsResult struct {
	Roots []Root `json:"roots"`
}

// inputs is embedded in the requests whose handlers may ask the client for
// input: ToolRequest, PromptRequest and ResourceRequest, the requests of
// the three methods that may answer input_required. Its methods are safe
// for concurrent use.
type inputs struct {
	rd round
}

// Elicit asks the user, through the client, for the input p describes, and
// returns the answer once the client sent it. Until then it returns an
// *InputRequired error, which the handler must return (see InputRequired);
// the request then comes back with the answer and the handler runs again.
// key names the question within the request: the same key returns the same
// answer in every later round, so use a new key to ask a new question.
//
// Elicit returns a -32021 MissingRequiredClientCapability *Error when the
// request did not declare elicitation in the mode p asks for; check
// req.Info.ClientCapabilities.CanElicit first to fall back gracefully.
// An answer that does not fit (a wrong shape, or form values that do not
// match the requested schema) is not returned: the question is asked again.
func (r *inputs) Elicit(key string, p *ElicitParams) (*ElicitResult, error) {
	params, mode, sch, perr := encodeElicit(p)
	var res *ElicitResult
	err := r.resolve(key, inputElicit, params, perr, func(c *ClientCapabilities) *Error {
		if c.CanElicit(mode) {
			return nil
		}
		need := ClientCapabilities{Elicitation: &ElicitationCapability{}}
		if mode == ElicitModeURL {
			need.Elicitation.URL = json.RawMessage("{}")
		} else if c.Elicitation != nil {
			need.Elicitation.Form = json.RawMessage("{}")
		}
		return MissingCapabilityError(need)
	}, func(raw []byte) error {
		var err error
		res, err = decodeElicitResult(raw, mode, sch)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Sample asks the client's language model for a message and returns it
// once the client sent it; until then it returns an *InputRequired error
// that the handler must return, as Elicit does. It returns a -32021 *Error
// when the request did not declare sampling.
func (r *inputs) Sample(key string, p *CreateMessageParams) (*CreateMessageResult, error) {
	params, perr := encodeSampling(p)
	var res *CreateMessageResult
	err := r.resolve(key, inputSample, params, perr, func(c *ClientCapabilities) *Error {
		if c.Sampling == nil {
			return MissingCapabilityError(ClientCapabilities{Sampling: &SamplingCapability{}})
		}
		if p != nil && (p.IncludeContext == "thisServer" || p.IncludeContext == "allServers") && c.Sampling.Context == nil {
			return MissingCapabilityError(ClientCapabilities{Sampling: &SamplingCapability{Context: json.RawMessage("{}")}})
		}
		return nil
	}, func(raw []byte) error {
		var err error
		res, err = decodeSamplingResult(raw)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ListRoots asks the client for its roots and returns them once the client
// sent them; until then it returns an *InputRequired error that the handler
// must return, as Elicit does. It returns a -32021 *Error when the request
// did not declare roots.
func (r *inputs) ListRoots(key string) (*ListRootsResult, error) {
	var res *ListRootsResult
	err := r.resolve(key, inputRoots, []byte("{}"), nil, func(c *ClientCapabilities) *Error {
		if c.Roots == nil {
			return MissingCapabilityError(ClientCapabilities{Roots: &RootsCapability{}})
		}
		return nil
	}, func(raw []byte) error {
		var err error
		res, err = decodeRootsResult(raw)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// LoadState decodes the handler's own state, saved with SaveState in an
// earlier round of this request, into v, and reports whether there was
// any. The state travels sealed in requestState: the client can neither
// read nor change it.
func (r *inputs) LoadState(v any) (bool, error) {
	rd := &r.rd
	if rd.x == nil {
		return false, nil
	}
	rd.mu.Lock()
	user := rd.user
	rd.mu.Unlock()
	if user == nil {
		return false, nil
	}
	if err := json.Unmarshal(user, v); err != nil {
		return true, fmt.Errorf("mcp: decoding the saved request state: %w", err)
	}
	return true, nil
}

// SaveState saves v (any JSON-encodable value) as the handler's own state:
// if the handler answers input_required, LoadState returns it in the next
// round. It is dropped once the request completes.
func (r *inputs) SaveState(v any) error {
	rd := &r.rd
	if rd.x == nil {
		return errNoInputs
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("mcp: encoding the request state: %w", err)
	}
	rd.mu.Lock()
	rd.user = b
	rd.mu.Unlock()
	return nil
}

var errNoInputs = errors.New("mcp: this request cannot ask the client for input")

// resolve is the common path of Elicit, Sample and ListRoots: it returns
// nil once decode accepted an answer to key, or records the input request
// and returns *InputRequired, or returns the capability or programming
// error.
func (r *inputs) resolve(key string, method byte, params []byte, perr error, missing func(*ClientCapabilities) *Error, decode func([]byte) error) error {
	rd := &r.rd
	if rd.x == nil {
		return errNoInputs
	}
	if key == "" {
		perr = errors.New("the input request key is empty")
	}
	if perr != nil {
		return rd.bug(fmt.Errorf("%s %q: %w", inputMethodName(method), key, perr))
	}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if m := rd.methodOf(key); m != 0 && m != method {
		return rd.bug(fmt.Errorf("input request key %q is used for both %s and %s", key, inputMethodName(m), inputMethodName(method)))
	}
	if raw, ok := rd.answerFor(key, method); ok {
		err := decode(raw)
		if err == nil {
			rd.use(key, method, raw)
			return nil
		}
		rd.x.s.log.Debug("mcp: input response does not fit; asking again", "method", rd.x.method, "key", key, "err", err)
	}
	if e := missing(rd.caps); e != nil {
		return e
	}
	if !rd.isPending(key) {
		rd.pending = append(rd.pending, pendingInput{key: key, method: method, params: params})
	}
	return &InputRequired{Keys: []string{key}}
}

// round is the MRTR state of one run of a handler: the answers it may use,
// and what it asked for.
type round struct {
	mu        sync.Mutex
	x         *exchange
	caps      *ClientCapabilities
	responses []byte   // the request's inputResponses object, or nil
	carried   []answer // answers of earlier rounds, from the sealed state
	used      []answer // answers used in this run
	pending   []pendingInput
	user      []byte // the handler's own state (JSON), or nil
}

type pendingInput struct {
	key    string
	method byte
	params []byte
}

// openRound prepares rd, the round of a request that may ask for input: it
// reads the MRTR members of the request's params, inputResponses (an object
// or null) and requestState, which is verified here, before any handler
// runs. It allocates nothing for a request without them.
func (x *exchange) openRound(rd *round, info *RequestInfo) error {
	rd.x, rd.caps = x, &info.ClientCapabilities
	if v, ok := jsonscan.Lookup(x.params, "inputResponses"); ok {
		switch jsonscan.Kind(v) {
		case 'n':
		case '{':
			rd.responses = v
		default:
			return InvalidParams("Invalid params: inputResponses must be an object that maps the keys of the input requests to the client's results")
		}
	}
	if v, ok := jsonscan.Lookup(x.params, "requestState"); ok && jsonscan.Kind(v) != 'n' {
		tok, ok := jsonscan.String(v)
		if !ok {
			return InvalidParams("Invalid params: requestState must be a string")
		}
		p, err := x.s.state.openState(tok, x.method, x.params, x.statePrincipal())
		if err != nil {
			return err
		}
		rd.user = p.user
		rd.carried = p.answers
	}
	return nil
}

// bug reports a programming error in a handler's use of the input API: it
// is logged, and the client gets an internal error.
func (rd *round) bug(err error) error {
	rd.x.s.log.Error("mcp: input request", "method", rd.x.method, "err", err)
	return &Error{Code: CodeInternalError, Message: "Internal error", Err: err}
}

// methodOf returns the method key was used with in this run, or 0.
func (rd *round) methodOf(key string) byte {
	for _, a := range rd.used {
		if a.key == key {
			return a.method
		}
	}
	for _, p := range rd.pending {
		if p.key == key {
			return p.method
		}
	}
	return 0
}

func (rd *round) isPending(key string) bool {
	for _, p := range rd.pending {
		if p.key == key {
			return true
		}
	}
	return false
}

// answerFor returns the answer to key: one already used in this run, or a
// carried one to the same method, or the request's inputResponses member.
func (rd *round) answerFor(key string, method byte) ([]byte, bool) {
	for _, a := range rd.used {
		if a.key == key {
			return a.value, true
		}
	}
	for _, a := range rd.carried {
		if a.key == key && a.method == method {
			return a.value, true
		}
	}
	if v, ok := jsonscan.Lookup(rd.responses, key); ok && jsonscan.Kind(v) == '{' {
		return v, true
	}
	return nil, false
}

func (rd *round) use(key string, method byte, raw []byte) {
	for _, a := range rd.used {
		if a.key == key {
			return
		}
	}
	rd.used = append(rd.used, answer{key: key, method: method, value: raw})
}

// carry returns the answers to seal into the next round's state: those used
// in this run, then the carried ones this run did not reach.
func (rd *round) carry() []answer {
	out := rd.used
	for _, a := range rd.carried {
		if rd.methodOf(a.key) == 0 {
			out = append(out, a)
		}
	}
	return out
}

// isInputRequired reports whether a handler's error asks for input.
func isInputRequired(err error) bool {
	var ir *InputRequired
	return errors.As(err, &ir)
}

// appendInputRequired appends the input_required response of the round:
// the pending input requests and a sealed requestState (always sent, so
// that the result is never empty and later rounds are bound to this
// request). It carries serverInfo _meta and no cache hints.
func (x *exchange) appendInputRequired(dst []byte, rd *round) ([]byte, error) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	tok, err := x.s.state.sealState(x.method, x.params, x.statePrincipal(), rd.user, rd.carry())
	if err != nil {
		return nil, fmt.Errorf("sealing requestState: %w", err)
	}
	body := make([]byte, 0, 256+len(tok))
	body = append(body, '{')
	if len(rd.pending) > 0 {
		body = append(body, `"inputRequests":{`...)
		for i, p := range rd.pending {
			if i > 0 {
				body = append(body, ',')
			}
			body = jsonrpc.AppendString(body, p.key)
			body = append(body, `:{"method":`...)
			body = jsonrpc.AppendString(body, inputMethodName(p.method))
			body = append(body, `,"params":`...)
			body = append(body, p.params...)
			body = append(body, '}')
		}
		body = append(body, "},"...)
	}
	body = append(body, `"requestState":`...)
	body = jsonrpc.AppendString(body, tok)
	body = append(body, '}')
	return x.appendResult(dst, resultInputRequired, false, body, nil), nil
}

// CanElicit reports whether the client declared elicitation in mode
// (ElicitModeForm when empty). An empty elicitation capability means form
// mode only.
func (c *ClientCapabilities) CanElicit(mode ElicitMode) bool {
	e := c.Elicitation
	if e == nil {
		return false
	}
	if mode == ElicitModeURL {
		return e.URL != nil
	}
	return e.Form != nil || e.URL == nil
}

// encodeElicit validates p and encodes the elicitation/create params. It
// returns the form schema for validating answers.
func encodeElicit(p *ElicitParams) (params []byte, mode ElicitMode, sch []byte, err error) {
	if p == nil {
		return nil, ElicitModeForm, nil, errors.New("nil ElicitParams")
	}
	mode = p.Mode
	if mode == "" {
		mode = ElicitModeForm
	}
	if p.Message == "" {
		return nil, mode, nil, errors.New("ElicitParams.Message is empty")
	}
	b := []byte(`{"mode":`)
	b = jsonrpc.AppendString(b, string(mode))
	b = append(b, `,"message":`...)
	b = jsonrpc.AppendString(b, p.Message)
	switch mode {
	case ElicitModeForm:
		if p.URL != "" {
			return nil, mode, nil, errors.New("ElicitParams.URL is set in form mode; set Mode to ElicitModeURL")
		}
		sch = []byte(`{"type":"object","properties":{}}`)
		if p.RequestedSchema != nil {
			if sch, err = json.Marshal(p.RequestedSchema); err != nil {
				return nil, mode, nil, fmt.Errorf("encoding RequestedSchema: %w", err)
			}
			typ, _ := jsonscan.Lookup(sch, "type")
			props, _ := jsonscan.Lookup(sch, "properties")
			if !jsonscan.StringEqual(typ, "object") || !jsonscan.IsObject(props) {
				return nil, mode, nil, errors.New(`RequestedSchema must be a JSON Schema object with "type": "object" and "properties"`)
			}
		}
		b = append(b, `,"requestedSchema":`...)
		b = append(b, sch...)
	case ElicitModeURL:
		u, perr := url.Parse(p.URL)
		if p.URL == "" || perr != nil || !u.IsAbs() || u.Host == "" {
			return nil, mode, nil, fmt.Errorf("ElicitParams.URL %q is not an absolute URL", p.URL)
		}
		if p.RequestedSchema != nil {
			return nil, mode, nil, errors.New("ElicitParams.RequestedSchema is set in URL mode")
		}
		b = append(b, `,"url":`...)
		b = jsonrpc.AppendString(b, p.URL)
	default:
		return nil, mode, nil, fmt.Errorf("unknown elicitation mode %q", mode)
	}
	if len(p.Meta) > 0 {
		m, err := json.Marshal(p.Meta)
		if err != nil {
			return nil, mode, nil, fmt.Errorf("encoding Meta: %w", err)
		}
		b = append(b, `,"_meta":`...)
		b = append(b, m...)
	}
	return append(b, '}'), mode, sch, nil
}

// decodeElicitResult decodes and checks an ElicitResult: a known action,
// and for an accepted form, content that matches the requested schema.
func decodeElicitResult(raw []byte, mode ElicitMode, sch []byte) (*ElicitResult, error) {
	var w struct {
		Action  ElicitAction    `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	switch w.Action {
	case ElicitAccept, ElicitDecline, ElicitCancel:
	default:
		return nil, fmt.Errorf("unknown action %q", w.Action)
	}
	res := &ElicitResult{Action: w.Action}
	if k := jsonscan.Kind(w.Content); k != 0 && k != 'n' && k != '{' {
		return nil, errors.New("content must be an object")
	}
	if w.Action != ElicitAccept || mode != ElicitModeForm {
		return res, nil
	}
	content := w.Content
	if jsonscan.Kind(content) != '{' {
		content = json.RawMessage("{}")
	}
	v, err := formValidator(sch)
	if err != nil {
		return nil, err
	}
	if err := v.Validate(content); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(content, &res.Content); err != nil {
		return nil, err
	}
	res.raw = content
	return res, nil
}

// formValidators caches compiled elicitation schemas: handlers ask the same
// questions over and over.
var formValidators struct {
	sync.Mutex
	m map[string]*schema.Validator
}

func formValidator(sch []byte) (*schema.Validator, error) {
	formValidators.Lock()
	defer formValidators.Unlock()
	if v, ok := formValidators.m[string(sch)]; ok {
		return v, nil
	}
	v, err := schema.Compile("elicitation", sch)
	if err != nil {
		return nil, err
	}
	if formValidators.m == nil || len(formValidators.m) >= 256 {
		formValidators.m = make(map[string]*schema.Validator)
	}
	formValidators.m[string(sch)] = v
	return v, nil
}

// encodeSampling validates p and encodes the sampling/createMessage params.
func encodeSampling(p *CreateMessageParams) ([]byte, error) {
	if p == nil {
		return nil, errors.New("nil CreateMessageParams")
	}
	if len(p.Messages) == 0 {
		return nil, errors.New("CreateMessageParams.Messages is empty")
	}
	if p.MaxTokens <= 0 {
		return nil, errors.New("CreateMessageParams.MaxTokens must be positive")
	}
	for i, m := range p.Messages {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return nil, fmt.Errorf("message %d: role %q is not user or assistant", i, m.Role)
		}
		if len(m.Content) == 0 {
			return nil, fmt.Errorf("message %d has no content", i)
		}
		for _, c := range m.Content {
			switch c.(type) {
			case *TextContent, *ImageContent, *AudioContent:
			default:
				return nil, fmt.Errorf("message %d: sampling messages hold text, image or audio content, not %T", i, c)
			}
		}
	}
	switch p.IncludeContext {
	case "", "none", "thisServer", "allServers":
	default:
		return nil, fmt.Errorf("unknown includeContext %q", p.IncludeContext)
	}
	return json.Marshal(p)
}

// decodeSamplingResult decodes and checks a CreateMessageResult.
func decodeSamplingResult(raw []byte) (*CreateMessageResult, error) {
	var w struct {
		Role       Role            `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason"`
		Meta       Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	if w.Role != RoleUser && w.Role != RoleAssistant {
		return nil, fmt.Errorf("role %q is not user or assistant", w.Role)
	}
	res := &CreateMessageResult{Role: w.Role, Model: w.Model, StopReason: w.StopReason, Meta: w.Meta}
	var items []json.RawMessage
	switch jsonscan.Kind(w.Content) {
	case '{':
		items = []json.RawMessage{w.Content}
	case '[':
		if err := json.Unmarshal(w.Content, &items); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("content must be a content object or an array of them")
	}
	for _, it := range items {
		c, err := decodeSamplingContent(it)
		if err != nil {
			return nil, err
		}
		res.Content = append(res.Content, c)
	}
	return res, nil
}

func decodeSamplingContent(raw []byte) (Content, error) {
	var w struct {
		Type        string       `json:"type"`
		Text        *string      `json:"text"`
		Data        []byte       `json:"data"`
		MIMEType    string       `json:"mimeType"`
		Annotations *Annotations `json:"annotations"`
		Meta        Meta         `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	switch w.Type {
	case "text":
		if w.Text == nil {
			return nil, errors.New("text content without text")
		}
		return &TextContent{Text: *w.Text, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "image":
		return &ImageContent{Data: w.Data, MIMEType: w.MIMEType, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "audio":
		return &AudioContent{Data: w.Data, MIMEType: w.MIMEType, Annotations: w.Annotations, Meta: w.Meta}, nil
	}
	return nil, fmt.Errorf("unsupported sampling content type %q", w.Type)
}

// decodeRootsResult decodes and checks a ListRootsResult.
func decodeRootsResult(raw []byte) (*ListRootsResult, error) {
	var w struct {
		Roots *[]Root `json:"roots"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	if w.Roots == nil {
		return nil, errors.New("roots is missing")
	}
	for i, r := range *w.Roots {
		if r.URI == "" {
			return nil, fmt.Errorf("root %d has no uri", i)
		}
	}
	return &ListRootsResult{Roots: *w.Roots}, nil
}
