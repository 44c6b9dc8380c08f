package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// This file serves a modern (2026-07-28) backend. It needs no keys, leases
// or held calls: the caller's capabilities (normalized by Key) go in each
// backend request's _meta, and all calls share one backend session. A
// backend's input_required becomes the front's, with the same keys and the
// backend's requestState sealed inside the front's; the retry's
// inputResponses go to the backend as they are, with its requestState. So
// any replica serves any round, and nothing is held between rounds.

// maxRelayRounds bounds the backend rounds of one front request (rounds
// the caller had answered already, as a legacy caller of the front does,
// are sent back to the backend at once).
const maxRelayRounds = 16

// maxRelayInputs bounds the input requests of one backend round, as the
// client does for its own rounds.
const maxRelayInputs = 64

// modernState is what the front seals into requestState for a modern
// backend: the backend's own requestState.
type modernState struct {
	Backend *string `json:"b,omitempty"`
}

// provideModern forwards req to a modern backend.
func (b *Bridge) provideModern(ctx context.Context, req *mcp.MethodRequest, params json.RawMessage) (*mcp.ProvidedResult, error) {
	key, caps := Key(&req.Info.ClientCapabilities, b.opts.Extensions)
	// Every caller shares the one session (one per principal with
	// IsolatePrincipal).
	shared, err := b.scoped(req.Info, emptyKey)
	if err != nil {
		return nil, err
	}
	if shared != emptyKey {
		key = shared // the lists come from the caller's own backend: private
	}
	// A caller that asks for logs leases the session for the call: on
	// stdio a log message names no request, so the session's messages
	// are the call's (as for a legacy backend).
	lvl := req.Info.LogLevel
	s, err := b.pool.acquire(ctx, shared, mcp.ClientCapabilities{}, lvl != "")
	if err != nil {
		return nil, err
	}
	defer b.pool.release(s)
	opts := []client.CallOption{
		client.WithMeta(map[string]any{protocol.MetaClientCapabilities: caps}),
		client.WithProgress(func(p client.Progress) { req.Progress(p.Progress, p.Total, p.Message) }),
	}
	if lvl != "" {
		h := &heldCall{}
		h.front.Store(req)
		s.mu.Lock()
		s.cur = h
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.cur = nil
			s.mu.Unlock()
		}()
		opts = append(opts, client.WithLogLevel(lvl), client.WithLog(h.log))
	}
	res := &mcp.ProvidedResult{}
	switch req.Method {
	case "tools/call", "prompts/get", "resources/read":
		if err := b.checkHeaders(ctx, req, s, shared, params); err != nil {
			return nil, err
		}
		p, err := retryParams(req, params)
		if err != nil {
			return nil, err
		}
		opts = append(opts, client.ReturnInputRequired())
		raw, err := b.relayRounds(ctx, req, s, p, opts)
		if err != nil {
			return nil, err
		}
		res.Body = raw
		if req.Method == "resources/read" {
			res.Cache = &mcp.CacheHint{}
		}
		return res, nil
	}
	raw, err := s.c.Call(ctx, req.Method, params, opts...)
	if err != nil {
		return nil, b.backendError(ctx, s, err)
	}
	res.Body = raw
	if req.Method != "completion/complete" {
		res.Cache = &mcp.CacheHint{}
		if key != emptyKey {
			res.Cache.Scope = mcp.CachePrivate
		}
	}
	return res, nil
}

// retryParams returns the backend params of a front request: params, and
// on a retry the caller's inputResponses as they are and the backend's
// requestState from the front's sealed state.
func retryParams(req *mcp.MethodRequest, params json.RawMessage) (map[string]json.RawMessage, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, mcp.InvalidParams("Invalid params: params must be an object")
	}
	var st modernState
	resumed, err := req.LoadState(&st)
	if err != nil {
		return nil, err
	}
	if !resumed {
		return p, nil
	}
	var front struct {
		InputResponses json.RawMessage `json:"inputResponses"`
	}
	json.Unmarshal(req.Params, &front)
	if len(front.InputResponses) > 0 {
		p["inputResponses"] = front.InputResponses
	}
	if st.Backend != nil {
		p["requestState"], _ = json.Marshal(*st.Backend)
	}
	return p, nil
}

// relayRounds calls the backend and turns its input_required into the
// front's: the caller is asked under the backend's keys, and the backend's
// requestState is sealed into the front's. Requests the caller answers at
// once (a legacy caller of the front is asked in its session) go back to
// the backend without a front round.
func (b *Bridge) relayRounds(ctx context.Context, req *mcp.MethodRequest, s *session, p map[string]json.RawMessage, opts []client.CallOption) (json.RawMessage, error) {
	for range maxRelayRounds {
		raw, err := s.c.Call(ctx, req.Method, p, opts...)
		if err != nil {
			return nil, b.backendError(ctx, s, err)
		}
		var ir struct {
			ResultType    string `json:"resultType"`
			InputRequests map[string]struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			} `json:"inputRequests"`
			RequestState *string `json:"requestState"`
		}
		if json.Unmarshal(raw, &ir) != nil || ir.ResultType != "input_required" {
			return raw, nil
		}
		if len(ir.InputRequests) > maxRelayInputs {
			return nil, &mcp.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the backend asked for " + strconv.Itoa(len(ir.InputRequests)) + " inputs in one round (at most " + strconv.Itoa(maxRelayInputs) + " are relayed)"}
		}
		b.beforeInput(req)
		var irs []error
		answered := map[string]json.RawMessage{}
		for key, a := range ir.InputRequests {
			out, err := req.RequestInput(key, a.Method, a.Params)
			if need := (*mcp.InputRequired)(nil); errors.As(err, &need) {
				irs = append(irs, err)
				continue
			}
			if err != nil {
				return nil, err
			}
			answered[key] = out
		}
		if len(irs) > 0 {
			if err := req.SaveState(&modernState{Backend: ir.RequestState}); err != nil {
				return nil, err
			}
			return nil, errors.Join(irs...)
		}
		// Every request is answered already: back to the backend.
		p["inputResponses"], _ = json.Marshal(answered)
		delete(p, "requestState")
		if ir.RequestState != nil {
			p["requestState"], _ = json.Marshal(*ir.RequestState)
		}
	}
	return nil, &mcp.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the backend still asked for input after " + strconv.Itoa(maxRelayRounds) + " rounds"}
}
