package mcp

import (
	"context"
	"fmt"
)

// This file holds the one skeleton every call of a registered primitive
// goes through: tools/call, resources/read, prompts/get and custom methods
// (AddMethod). Each kind supplies its lookup (lookupTool, lookupResource,
// lookupPrompt, snapshot.customHandler), what its request looks like and
// how its result is encoded; the steps and their order are here, once:
//
//	lookup ─▶ scopes ─▶ RequestInfo ─▶ prepare (the kind's own checks, the request)
//	       ─▶ input round ─▶ handler ─▶ error policy ─▶ encode
//
// Lookup answers a missing item and one the caller's ListFilters hide with
// the same error (kind.notFound), so a hidden item cannot be told from one
// that does not exist. The error policy is the skeleton's one parameter:
// a tool's ordinary error is an isError result (toolErrorResult), every
// other kind's is an internal error whose details are logged, not sent.

// primitiveKind names a kind of primitive in the skeleton's errors.
type primitiveKind uint8

const (
	kindTool primitiveKind = iota
	kindResource
	kindPrompt
	kindMethod
)

// notFound is the answer to a call that names no item of kind k that the
// caller may see.
func (k primitiveKind) notFound(name string) *Error {
	switch k {
	case kindTool:
		return InvalidParams("Unknown tool: " + name)
	case kindResource:
		return ResourceNotFound(name)
	case kindPrompt:
		return InvalidParams("Unknown prompt: " + name)
	}
	return methodNotFound(name)
}

// wrap names the item in an ordinary handler error that the error policy
// turns into an internal error (logged, never sent).
func (k primitiveKind) wrap(name string, err error) error {
	switch k {
	case kindTool:
		return fmt.Errorf("tool %q: %w", name, err)
	case kindResource:
		return fmt.Errorf("reading resource %q: %w", name, err)
	case kindPrompt:
		return fmt.Errorf("prompt %q: %w", name, err)
	}
	return fmt.Errorf("method %q: %w", name, err)
}

// primitive names the looked-up item of a call for the skeleton: its
// kind and name (for errors) and the scopes its registration requires.
type primitive struct {
	kind   primitiveKind
	name   string   // the tool or prompt name, the resource URI or the method
	scopes []string // the scopes the item requires (Scopes of its registration)
}

// primitiveCall holds the kind-specific steps of one call, as callPrimitive
// runs them. It lives on the caller's stack for the duration of the call;
// its functions are called at most once each, in the skeleton's order, in
// the caller's goroutine. (It holds functions only: what it points to does
// not escape, so the closures stay on the caller's stack.)
type primitiveCall[R any] struct {
	// prepare runs the kind's own checks and builds its request with info,
	// returning the request's input round. It may instead answer the call
	// itself (done, with out or err): a tool's invalid arguments or a call
	// that became a task.
	prepare func(info *RequestInfo) (rd *round, out []byte, done bool, err error)
	// run calls the handler with the request prepare built.
	run func(ctx context.Context) (R, error)
	// encode appends the response carrying res to dst.
	encode func(dst []byte, res R) ([]byte, error)
}

// callPrimitive is the skeleton: scopes, RequestInfo, prepare, the input
// round, the handler, the error policy and encode. Lookup happened before
// (p exists and the caller may see it). A handler that asks for input
// answers input_required (or, in the legacy era, the bridge asks the client
// and runs it again).
//
// policy is the skeleton's one parameter: it turns an ordinary handler
// error (not a *Error, not a request for input, not cancellation) into a
// result; nil makes it an internal error. Tools pass toolErrorResult.
func callPrimitive[R any](ctx context.Context, x *exchange, dst []byte, p primitive, policy func(error) R, c *primitiveCall[R]) ([]byte, error) {
	if err := x.requireScopes(p.scopes); err != nil {
		return nil, err
	}
	info, err := x.requestInfo()
	if err != nil {
		return nil, err
	}
	rd, out, done, err := c.prepare(info)
	if done || err != nil {
		return out, err
	}
	if err := x.openRound(rd, info); err != nil {
		return nil, err
	}
	res, err := c.run(ctx)
	if err != nil {
		if res, err = settleError(ctx, p, policy, err); err != nil {
			if isTaskInput(err) {
				return x.appendInputRequired(dst, rd)
			}
			return nil, err
		}
	}
	return c.encode(dst, res)
}

// settleError applies the error policy to a handler's error err: a
// protocol error (*Error) is returned as it is, so is a request for input
// (the caller answers input_required or parks a task), cancellation
// becomes "Request cancelled", and any other error becomes policy's result
// or, with a nil policy, the error wrapped with the item's name (an
// internal error to the client).
func settleError[R any](ctx context.Context, p primitive, policy func(error) R, err error) (R, error) {
	var zero R
	if _, ok := asError(err); ok || isInputRequired(err) {
		return zero, err
	}
	if e := cancelled(ctx, err); e != nil {
		return zero, e
	}
	if policy == nil {
		return zero, p.kind.wrap(p.name, err)
	}
	return policy(err), nil
}

// toolErrorResult is the tools' error policy: an ordinary error from a tool
// handler is a result with isError set and the error's text, which the
// model sees.
func toolErrorResult(err error) *CallToolResult { return errorResult(err.Error()) }
