package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/jsonrpc"

	"github.com/mcpkit/mcpkit/internal/wire"
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

// Error names the keys of the input the handler asked for.
func (e *InputRequired) Error() string {
	if len(e.Keys) == 0 {
		return "mcp: input required"
	}
	return "mcp: input required: " + strings.Join(e.Keys, ", ")
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
		return MissingCapability(need)
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
// when the request did not declare sampling (or sampling.tools, when p has
// Tools or ToolChoice, or sampling.context for the deprecated
// includeContext values).
//
// Revision 2026-07-28 deprecates sampling (SEP-2577): new servers should
// integrate with a language model provider directly. It stays in the
// specification for at least twelve months, and Sample keeps working for
// the clients that declare it, in both eras.
func (r *inputs) Sample(key string, p *CreateMessageParams) (*CreateMessageResult, error) {
	params, perr := encodeSampling(p)
	var res *CreateMessageResult
	err := r.resolve(key, inputSample, params, perr, func(c *ClientCapabilities) *Error {
		return missingFor(c, inputSample, params) // provider.go
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
//
// Revision 2026-07-28 deprecates roots (SEP-2577): new servers should take
// directories as tool arguments or configuration instead. It stays in the
// specification for at least twelve months, and ListRoots keeps working for
// the clients that declare it, in both eras.
func (r *inputs) ListRoots(key string) (*ListRootsResult, error) {
	var res *ListRootsResult
	err := r.resolve(key, inputRoots, []byte("{}"), nil, func(c *ClientCapabilities) *Error {
		return missingFor(c, inputRoots, nil)
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

// bug reports a programming error in the handler's use of the input API.
func (r *inputs) bug(err error) error {
	if r.rd.x == nil {
		return err
	}
	return r.rd.bug(err)
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

// moveFrom moves the state of the round from into rd (from is left
// empty): a provided tools/call run as a task hands its ToolRequest's
// round to the MethodRequest the Provider gets, and back. Neither round
// is in use by another goroutine during the move.
func (rd *round) moveFrom(from *round) {
	from.mu.Lock()
	x, caps, responses, carried, used, pending, user := from.x, from.caps, from.responses, from.carried, from.used, from.pending, from.user
	from.responses, from.carried, from.used, from.pending, from.user = nil, nil, nil, nil, nil
	from.mu.Unlock()
	rd.mu.Lock()
	rd.x, rd.caps, rd.responses, rd.carried, rd.used, rd.pending, rd.user = x, caps, responses, carried, used, pending, user
	rd.mu.Unlock()
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
	if v, ok := x.param("inputResponses"); ok {
		switch jsonscan.Kind(v) {
		case 'n':
		case '{':
			rd.responses = v
		default:
			return InvalidParams("Invalid params: inputResponses must be an object that maps the keys of the input requests to the client's results")
		}
	}
	if v, ok := x.param("requestState"); ok && jsonscan.Kind(v) != 'n' {
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
	return &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error", Err: err}
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
	if err := x.era().askClient(rd, tok); err != nil {
		// A legacy client is asked with real requests instead, and the
		// handler runs again with the answers (legacy_bridge.go).
		return nil, err
	}
	body := make([]byte, 0, 256+len(tok))
	body = append(body, '{')
	if len(rd.pending) > 0 {
		body = append(body, `"inputRequests":{`...)
		for i, p := range rd.pending {
			if i > 0 {
				body = append(body, ',')
			}
			body = wire.AppendString(body, p.key)
			body = append(body, `:{"method":`...)
			body = wire.AppendString(body, inputMethodName(p.method))
			body = append(body, `,"params":`...)
			body = append(body, p.params...)
			body = append(body, '}')
		}
		body = append(body, "},"...)
	}
	body = append(body, `"requestState":`...)
	body = wire.AppendString(body, tok)
	body = append(body, '}')
	return x.appendResult(dst, resultInputRequired, false, body, nil), nil
}
