package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/schema"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// This file holds the three kinds of input a handler may ask the client
// for (elicitation, sampling, roots): their types, the encoding of the
// input requests, and the checks an answer must pass before a handler
// sees it. mrtr.go holds the round trips themselves.

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
	Metadata any `json:"metadata,omitempty"`
	// Tools are tools the model may call during the generation; a call
	// comes back as a *ToolUseContent in the result (StopReason
	// "toolUse"), and its result goes in the next request's messages as a
	// *ToolResultContent. They need the client's sampling.tools capability.
	// Only the tools' Name, Title, Description, InputSchema, OutputSchema,
	// Annotations, Icons and Meta are sent.
	Tools []*Tool `json:"tools,omitempty"`
	// ToolChoice controls whether the model uses Tools; nil means the
	// client's default ("auto").
	ToolChoice *ToolChoice `json:"toolChoice,omitempty"`
	Meta       Meta        `json:"_meta,omitempty"`
}

// ToolChoice controls tool use in a sampling request.
type ToolChoice struct {
	// Mode is "auto" (the model decides), "required" (the model must use
	// at least one tool) or "none" (it must not use any).
	Mode string `json:"mode,omitempty"`
}

// SamplingMessage is one message of a sampling conversation. Content holds
// *TextContent, *ImageContent, *AudioContent, *ToolUseContent (the model's
// tool calls, in an assistant message) or *ToolResultContent (their
// results, in a user message) items.
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
	// Content holds *TextContent, *ImageContent and *AudioContent items,
	// and *ToolUseContent items when the request offered Tools.
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
	b = wire.AppendString(b, string(mode))
	b = append(b, `,"message":`...)
	b = wire.AppendString(b, p.Message)
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
		b = wire.AppendString(b, p.URL)
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
			switch c := c.(type) {
			case *TextContent, *ImageContent, *AudioContent:
			case *ToolUseContent:
				if c.ID == "" || c.Name == "" {
					return nil, fmt.Errorf("message %d: tool use without id or name", i)
				}
			case *ToolResultContent:
				if c.ToolUseID == "" {
					return nil, fmt.Errorf("message %d: tool result without toolUseId", i)
				}
			default:
				return nil, fmt.Errorf("message %d: sampling messages hold text, image, audio, tool use or tool result content, not %T", i, c)
			}
		}
	}
	switch p.IncludeContext {
	case "", "none", "thisServer", "allServers":
	default:
		return nil, fmt.Errorf("unknown includeContext %q", p.IncludeContext)
	}
	for i, t := range p.Tools {
		if t == nil || t.Name == "" {
			return nil, fmt.Errorf("tool %d has no name", i)
		}
		if t.InputSchema == nil {
			return nil, fmt.Errorf("tool %q has no InputSchema", t.Name)
		}
	}
	if p.ToolChoice != nil {
		switch p.ToolChoice.Mode {
		case "", "auto", "required", "none":
		default:
			return nil, fmt.Errorf("unknown toolChoice mode %q", p.ToolChoice.Mode)
		}
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
		// tool_use
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
		// tool_result
		ToolUseID         string            `json:"toolUseId"`
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           bool              `json:"isError"`
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
	case "tool_use":
		if w.ID == "" || w.Name == "" || jsonscan.Kind(w.Input) != '{' {
			return nil, errors.New("tool_use content needs an id, a name and an input object")
		}
		return &ToolUseContent{ID: w.ID, Name: w.Name, Input: w.Input, Meta: w.Meta}, nil
	case "tool_result":
		if w.ToolUseID == "" {
			return nil, errors.New("tool_result content without toolUseId")
		}
		r := &ToolResultContent{ToolUseID: w.ToolUseID, StructuredContent: w.StructuredContent, IsError: w.IsError, Meta: w.Meta}
		for _, it := range w.Content {
			c, err := decodeSamplingContent(it)
			if err != nil {
				return nil, fmt.Errorf("tool_result content: %w", err)
			}
			if _, nested := c.(*ToolUseContent); nested {
				return nil, errors.New("tool_result content holds a tool_use")
			}
			if _, nested := c.(*ToolResultContent); nested {
				return nil, errors.New("tool_result content holds a tool_result")
			}
			r.Content = append(r.Content, c)
		}
		return r, nil
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

// InputRequester is the input API of the requests whose handlers may ask
// the client for input: *ToolRequest, *PromptRequest and *ResourceRequest.
type InputRequester interface {
	Elicit(key string, p *ElicitParams) (*ElicitResult, error)
	Sample(key string, p *CreateMessageParams) (*CreateMessageResult, error)
	ListRoots(key string) (*ListRootsResult, error)
	LoadState(v any) (bool, error)
	SaveState(v any) error
}

// ElicitForm asks the user to fill in a form made from the struct type T
// and returns the values as a T, with the user's action. It is Elicit with
// the requested schema inferred from T: each exported field is a form
// field named by its json tag, of type string, boolean, integer (any Go
// integer) or number (float32, float64); the `jsonschema` tag is the
// field's description, and a field is required unless its json tag says
// omitempty or omitzero. When the action is not ElicitAccept, the T is the
// zero value. The error is what Elicit returns: an *InputRequired to
// return from the handler, a -32021 *Error, or a programming error such as
// a field type a form cannot hold.
func ElicitForm[T any](r InputRequester, key, message string) (T, ElicitAction, error) {
	var v T
	sch, err := formSchema(reflect.TypeFor[T]())
	if err != nil {
		err = fmt.Errorf("ElicitForm[%v]: %w", reflect.TypeFor[T](), err)
		if b, ok := r.(interface{ bug(error) error }); ok {
			err = b.bug(err)
		}
		return v, "", err
	}
	res, err := r.Elicit(key, &ElicitParams{Message: message, RequestedSchema: sch})
	if err != nil {
		return v, "", err
	}
	if res.Accepted() {
		if err := res.Decode(&v); err != nil {
			return v, res.Action, err
		}
	}
	return v, res.Action, nil
}

// formSchemas caches the form schemas of ElicitForm by type.
var formSchemas sync.Map // reflect.Type -> json.RawMessage or error

// formSchema infers a flat elicitation form from a struct type.
func formSchema(t reflect.Type) (json.RawMessage, error) {
	if v, ok := formSchemas.Load(t); ok {
		if err, ok := v.(error); ok {
			return nil, err
		}
		return v.(json.RawMessage), nil
	}
	sch, err := inferForm(t)
	if err != nil {
		formSchemas.Store(t, err)
		return nil, err
	}
	formSchemas.Store(t, sch)
	return sch, nil
}

func inferForm(t reflect.Type) (json.RawMessage, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("a form is a struct, not %v", t)
	}
	b := []byte(`{"type":"object","properties":{`)
	var required []string
	n := 0
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Anonymous {
			if f.Anonymous {
				return nil, fmt.Errorf("field %s: embedded structs are not supported in a form", f.Name)
			}
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		var typ string
		switch f.Type.Kind() {
		case reflect.String:
			typ = "string"
		case reflect.Bool:
			typ = "boolean"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			typ = "integer"
		case reflect.Float32, reflect.Float64:
			typ = "number"
		default:
			return nil, fmt.Errorf("field %s: a form field is a string, boolean, integer or number, not %v", f.Name, f.Type)
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = wire.AppendString(b, name)
		b = append(b, `:{"type":"`...)
		b = append(b, typ...)
		b = append(b, '"')
		if d := f.Tag.Get("jsonschema"); d != "" {
			b = append(b, `,"description":`...)
			b = wire.AppendString(b, d)
		}
		b = append(b, '}')
		if !strings.Contains(","+opts+",", ",omitempty,") && !strings.Contains(","+opts+",", ",omitzero,") {
			required = append(required, name)
		}
	}
	b = append(b, '}')
	if len(required) > 0 {
		b = append(b, `,"required":`...)
		b = append(b, mustMarshal(required)...)
	}
	return append(b, '}'), nil
}
