package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// maxCompletions is the most values one completion/complete result holds.
const maxCompletions = 100

// CompletionHandler suggests values for one argument of a prompt or one
// variable of a resource template (see Prompt.Complete and
// ResourceTemplate.Complete). The argument is known to be declared by the
// prompt or template. Results with more than 100 values are cut to 100,
// with HasMore set.
type CompletionHandler func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error)

// CompleteRequest is a completion/complete request as its handler sees it.
type CompleteRequest struct {
	requestBase
	// Info describes the request: the protocol version and era, the client
	// identity, capabilities and log level its _meta declared, and the
	// verified principal.
	Info *RequestInfo
	// Prompt is the name of the prompt whose argument is completed, or ""
	// for a resource template.
	Prompt string
	// URITemplate is the URI template whose variable is completed, or ""
	// for a prompt.
	URITemplate string
	// Argument is the name of the argument or template variable.
	Argument string
	// Value is what the user typed so far.
	Value string
	// Context holds the values of arguments already resolved. It is never
	// nil.
	Context map[string]string
}

// CompleteResult holds completion suggestions, best first.
type CompleteResult struct {
	// Values are the suggestions; at most 100 are sent.
	Values []string
	// Total is the number of suggestions there are, when known and greater
	// than len(Values); zero leaves it out.
	Total int
	// HasMore reports that there are suggestions beyond Values.
	HasMore bool
}

// CompleteFrom returns a CompletionHandler that suggests, for each
// argument named in candidates, the candidates that start with the typed
// value (ignoring case), in the given order.
func CompleteFrom(candidates map[string][]string) CompletionHandler {
	return func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error) {
		var out []string
		prefix := strings.ToLower(req.Value)
		for _, c := range candidates[req.Argument] {
			if strings.HasPrefix(strings.ToLower(c), prefix) {
				out = append(out, c)
			}
		}
		return &CompleteResult{Values: out}, nil
	}
}

// buildUtilities declares the capabilities of the utilities that depend on
// what is registered: completions when a prompt or template can complete,
// and logging when any handler (which may log) is registered.
func buildUtilities(sn *snapshot) {
	complete := false
	for _, p := range sn.prompts {
		complete = complete || p.prompt.Complete != nil
	}
	for _, t := range sn.templates {
		complete = complete || t.template.Complete != nil
	}
	if complete {
		sn.caps.Completions = &struct{}{}
	}
	if len(sn.tools) > 0 || len(sn.prompts) > 0 || sn.resourcesList != nil {
		sn.caps.Logging = &struct{}{}
	}
}

func handleComplete(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	if x.snap.caps.Completions == nil {
		return nil, methodNotFound(x.method)
	}
	var cp completeParams
	if e := decodeParams(x, &cp); e != nil {
		return nil, e
	}
	argName := cp.argument
	req := &CompleteRequest{Argument: argName, Value: cp.value, Context: cp.context}
	var h CompletionHandler
	switch cp.refType {
	case "ref/prompt":
		name := cp.refName
		p, err := x.lookupPrompt(ctx, name)
		if err != nil {
			return nil, err
		}
		if err := x.requireScopes(p.prompt.Scopes); err != nil {
			return nil, err
		}
		if p.prompt.argument(argName) == nil {
			return nil, InvalidParams("Invalid params: prompt " + name + " has no argument " + argName + p.prompt.argumentList())
		}
		req.Prompt, h = name, p.prompt.Complete
	default: // "ref/resource"
		uri := cp.refURI
		var t *templateEntry
		for _, e := range x.snap.templates {
			if e.template.URITemplate == uri {
				t = e
				break
			}
		}
		if t != nil {
			if ok, err := x.visible(ctx, t); err != nil || !ok {
				t = nil
				if err != nil {
					return nil, err
				}
			}
		}
		if t == nil {
			return nil, InvalidParams("Invalid params: unknown resource template " + uri)
		}
		if !slices.Contains(t.vars, argName) {
			return nil, InvalidParams("Invalid params: resource template " + uri + " has no variable " + argName + "; its variables are " + strings.Join(t.vars, ", "))
		}
		req.URITemplate, h = uri, t.template.Complete
	}

	res := &CompleteResult{}
	if h != nil {
		info, err := x.requestInfo()
		if err != nil {
			return nil, err
		}
		req.requestBase, req.Info = requestBase{x: x}, info
		r, err := h(ctx, req)
		if err != nil {
			if e := cancelled(ctx, err); e != nil {
				return nil, e
			}
			return nil, fmt.Errorf("completing %s: %w", argName, err)
		}
		if r != nil {
			res = r
		}
	}
	values, total, hasMore := res.Values, res.Total, res.HasMore
	if values == nil {
		values = []string{}
	}
	if len(values) > maxCompletions {
		total = max(total, len(values))
		values, hasMore = values[:maxCompletions], true
	}
	body, err := json.Marshal(struct {
		Completion completionWire `json:"completion"`
	}{completionWire{values, total, hasMore}})
	if err != nil {
		return nil, err
	}
	return x.appendResult(dst, resultComplete, false, body, nil), nil
}

type completionWire struct {
	Values  []string `json:"values"`
	Total   int      `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}
