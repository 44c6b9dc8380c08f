package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// Prompt describes a prompt template as clients see it in prompts/list.
type Prompt struct {
	// Name identifies the prompt. Required.
	Name string `json:"name"`
	// Title is an optional display name.
	Title string `json:"title,omitempty"`
	// Description tells the user what the prompt is for. Required.
	Description string `json:"description,omitempty"`
	// Arguments are the prompt's arguments; prompts/get checks that the
	// required ones are present and that no others are sent.
	Arguments []PromptArgument `json:"arguments,omitempty"`
	Icons     []Icon           `json:"icons,omitempty"`
	Meta      Meta             `json:"_meta,omitempty"`

	// Complete, when set, suggests argument values in completion/complete
	// requests.
	Complete CompletionHandler `json:"-"`

	// Scopes are the OAuth scopes a caller's access token must all grant
	// for the caller to see this prompt in lists and to get it, on a server
	// with AuthOptions; without them the request gets 403
	// insufficient_scope naming them. Callers without a Principal (stdio)
	// are not checked. Not sent to clients.
	Scopes []string `json:"-"`
}

// PromptArgument is one argument of a prompt. Argument values are strings.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptRequest is a prompts/get request as its handler sees it.
type PromptRequest struct {
	requestBase
	// Info describes the request: the protocol version and era, the client
	// identity, capabilities and log level its _meta declared, and the
	// verified principal.
	Info *RequestInfo
	inputs
	// Name is the prompt's name.
	Name string
	// Arguments holds the arguments sent, already checked against the
	// prompt's declared arguments. It is never nil.
	Arguments map[string]string
}

// GetPromptResult is the result of prompts/get.
type GetPromptResult struct {
	// Description optionally describes this rendering of the prompt.
	Description string
	// Messages are the prompt's messages.
	Messages []PromptMessage
	Meta     Meta
}

// PromptMessage is one message of a prompt: text, an image, audio, a
// resource link or an embedded resource, spoken by the user or the
// assistant.
type PromptMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

// PromptHandler renders a prompt. A *Error it returns is sent as it is;
// an *InputRequired (from req.Elicit, Sample or ListRoots) becomes an
// input_required result; any other error becomes an internal error
// (-32603) whose details are logged, not sent.
type PromptHandler func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error)

type promptEntry struct {
	prompt  Prompt
	encoded []byte
	handler PromptHandler
}

// AddPrompt registers a prompt, rendered by h, on s. It replaces a prompt
// of the same name, and panics on programmer errors (a missing name,
// description or handler, an argument without a name or declared twice),
// naming the prompt. It is safe to call while serving.
func (s *Server) AddPrompt(p *Prompt, h PromptHandler) {
	what := fmt.Sprintf("AddPrompt %q", p.Name)
	if p.Name == "" {
		panic(what + ": missing name")
	}
	if p.Description == "" {
		panic(what + ": missing description")
	}
	if h == nil {
		panic(what + ": missing handler")
	}
	seen := map[string]bool{}
	for _, a := range p.Arguments {
		if a.Name == "" {
			panic(what + ": an argument has no name")
		}
		if seen[a.Name] {
			panic(what + ": argument " + a.Name + " is declared twice")
		}
		seen[a.Name] = true
	}
	checkScopes("AddPrompt", p.Name, p.Scopes)
	e := &promptEntry{prompt: *p, handler: h}
	e.prompt.Arguments = append([]PromptArgument(nil), p.Arguments...)
	e.prompt.Scopes = slices.Clone(p.Scopes)
	e.encoded = mustMarshal(&e.prompt)
	s.mu.Lock()
	s.reg.prompts[p.Name] = e
	s.changed(PromptsListChanged)
	s.mu.Unlock()
}

// RemovePrompts removes the named prompts; unknown names are ignored.
func (s *Server) RemovePrompts(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, name := range names {
		if _, ok := s.reg.prompts[name]; ok {
			delete(s.reg.prompts, name)
			n++
		}
	}
	if n > 0 {
		s.changed(PromptsListChanged)
	}
}

func (r *registry) buildPrompts(s *Server, sn *snapshot) {
	if len(r.prompts) == 0 {
		return
	}
	sn.caps.Prompts = &ListCapability{}
	sn.prompts = make(map[string]*promptEntry, len(r.prompts))
	items := make([]listItem, 0, len(r.prompts))
	for name, e := range r.prompts {
		sn.prompts[name] = e
		items = append(items, listItem{key: name, json: e.encoded, scopes: e.prompt.Scopes, v: e})
	}
	sn.promptsList = newListing(s, "prompts", items)
}

func handlePromptsList(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	if x.snap.promptsList == nil {
		return nil, methodNotFound(x.method)
	}
	return x.servePage(ctx, x.snap.promptsList, dst)
}

// lookupPrompt returns the named prompt if it exists and the caller may
// see it, and kindPrompt.notFound otherwise.
func (x *exchange) lookupPrompt(ctx context.Context, name string) (*promptEntry, error) {
	p := x.snap.prompts[name]
	if p == nil {
		return nil, kindPrompt.notFound(name)
	}
	if ok, err := x.visible(ctx, p); err != nil || !ok {
		return nil, orError(err, kindPrompt.notFound(name))
	}
	return p, nil
}

// stringMap decodes an optional object of string values (prompt arguments,
// completion context); what names it in errors.
func stringMap(v []byte, what string) (map[string]string, error) {
	m := map[string]string{}
	if len(v) == 0 || jsonscan.Kind(v) == 'n' {
		return m, nil
	}
	it, ok := jsonscan.Object(v)
	if !ok {
		return nil, InvalidParams("Invalid params: " + what + " must be an object of strings")
	}
	var mem jsonscan.Member
	for it.Next(&mem) {
		var key string
		if err := json.Unmarshal(append(append([]byte{'"'}, mem.Key...), '"'), &key); err != nil {
			return nil, InvalidParams("Invalid params: malformed " + what)
		}
		val, ok := jsonscan.String(mem.Value)
		if !ok {
			return nil, InvalidParams("Invalid params: " + what + " " + key + " must be a string")
		}
		m[key] = val
	}
	return m, nil
}

// checkArguments checks prompt arguments against the declared ones.
func (p *Prompt) checkArguments(args map[string]string) *Error {
	var missing []string
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return InvalidParams("Invalid params: prompt " + p.Name + " needs argument(s) " + strings.Join(missing, ", "))
	}
	for k := range args {
		if p.argument(k) == nil {
			return InvalidParams("Invalid params: prompt " + p.Name + " has no argument " + k + p.argumentList())
		}
	}
	return nil
}

func (p *Prompt) argument(name string) *PromptArgument {
	for i := range p.Arguments {
		if p.Arguments[i].Name == name {
			return &p.Arguments[i]
		}
	}
	return nil
}

// argumentList describes the declared arguments for error messages.
func (p *Prompt) argumentList() string {
	if len(p.Arguments) == 0 {
		return "; it takes no arguments"
	}
	names := make([]string, len(p.Arguments))
	for i, a := range p.Arguments {
		names[i] = a.Name
	}
	return "; its arguments are " + strings.Join(names, ", ")
}

func handlePromptsGet(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	if x.snap.prompts == nil {
		return nil, methodNotFound(x.method)
	}
	nameV, _ := x.param("name")
	name, ok := jsonscan.String(nameV)
	if !ok {
		return nil, InvalidParams("Invalid params: prompts/get needs a string name")
	}
	p, err := x.lookupPrompt(ctx, name)
	if err != nil {
		return nil, err
	}
	var req *PromptRequest
	return callPrimitive(ctx, x, dst, primitive{kind: kindPrompt, name: name, scopes: p.prompt.Scopes}, nil, &primitiveCall[*GetPromptResult]{
		prepare: func(info *RequestInfo) (*round, []byte, bool, error) {
			argsV, _ := x.param("arguments")
			args, err := stringMap(argsV, "arguments")
			if err != nil {
				return nil, nil, true, err
			}
			if e := p.prompt.checkArguments(args); e != nil {
				return nil, nil, true, e
			}
			req = &PromptRequest{requestBase: requestBase{x: x}, Info: info, Name: name, Arguments: args}
			return &req.rd, nil, false, nil
		},
		run: func(ctx context.Context) (*GetPromptResult, error) { return p.handler(ctx, req) },
		encode: func(dst []byte, res *GetPromptResult) ([]byte, error) {
			return x.appendPromptResult(dst, name, res)
		},
	})
}

// appendPromptResult appends the response carrying res, the result of the
// prompt name.
func (x *exchange) appendPromptResult(dst []byte, name string, res *GetPromptResult) ([]byte, error) {
	if res == nil {
		res = &GetPromptResult{}
	}
	for i, m := range res.Messages {
		if m.Content == nil {
			return nil, fmt.Errorf("prompt %q: message %d has no content", name, i)
		}
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return nil, fmt.Errorf("prompt %q: message %d has role %q, not user or assistant", name, i, m.Role)
		}
	}
	msgs := res.Messages
	if msgs == nil {
		msgs = []PromptMessage{}
	}
	body, err := json.Marshal(struct {
		Description string          `json:"description,omitempty"`
		Messages    []PromptMessage `json:"messages"`
	}{res.Description, msgs})
	if err != nil {
		return nil, fmt.Errorf("prompt %q: encoding the result: %w", name, err)
	}
	var meta []byte
	if len(res.Meta) > 0 {
		if meta, err = json.Marshal(res.Meta); err != nil {
			return nil, fmt.Errorf("prompt %q: encoding _meta: %w", name, err)
		}
	}
	return x.appendResult(dst, resultComplete, false, body, meta), nil
}
