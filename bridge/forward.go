package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	iclient "github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// This file is how a retry reaches the replica that holds its backend
// call. The owner seals its own internal URL (Options.AdvertiseURL) into
// the requestState; a replica that gets a retry for a call it does not
// hold forwards the whole request there, once (a forwarded request is
// never forwarded again), and relays the owner's answer: the result, the
// next input_required round, or the error. The backend call is never run
// a second time. On a protected front, the caller's token is not
// forwarded (no handler sees it): the caller goes sealed with the shared
// state keys (mcp.MethodRequest.SealPrincipal), and the owner's front
// authenticates the forwarded request with it.

// hdrForwarded marks a request one replica forwarded to another.
const hdrForwarded = "Mcpkit-Bridge-Forwarded"

// maxForwardBody bounds the owner's answer.
const maxForwardBody = 16 << 20

// forward sends the retry req to the replica at url and relays its answer.
func (b *Bridge) forward(ctx context.Context, req *mcp.MethodRequest, owner, url string) (*mcp.ProvidedResult, error) {
	gone := func(why string) error {
		b.log.Warn("bridge: forwarding a retry to the replica holding its call failed", "owner", owner, "url", url, "err", why)
		return &mcp.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the call is held by bridge replica " + owner + ", which could not be reached; it was not run again"}
	}
	if req.Info.Header == nil || req.Info.Header.Get(hdrForwarded) != "" {
		return nil, gone("not forwardable (a stdio request, or forwarded already)")
	}
	body := jsonrpc.AppendRequest(nil, jsonrpc.IntID(1), req.Method, req.Params)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, gone(err.Error())
	}
	for k, v := range req.Info.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Host", "Connection", "Accept-Encoding", "Keep-Alive", "Transfer-Encoding", "Upgrade", mcp.HeaderSealedPrincipal:
			continue
		}
		hr.Header[k] = v
	}
	// On a protected front the caller's token stayed with this replica's
	// verifier: the owner gets the verified caller, sealed with the state
	// keys the replicas share and bound to this very request.
	sealed, err := req.SealPrincipal()
	if err != nil {
		return nil, gone("sealing the caller for the owner: " + err.Error())
	}
	if sealed != "" {
		hr.Header.Set(mcp.HeaderSealedPrincipal, sealed)
	}
	hr.Header.Set(hdrForwarded, b.id)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := b.httpClient().Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, gone(err.Error())
	}
	defer resp.Body.Close()
	msg, err := lastMessage(resp)
	if err != nil {
		return nil, gone(err.Error())
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return nil, gone("the owner's answer is not JSON-RPC")
	}
	if m.Error != nil {
		return nil, &mcp.Error{Code: m.Error.Code, Message: m.Error.Message, Data: m.Error.Data}
	}
	var rt struct {
		ResultType string `json:"resultType"`
	}
	json.Unmarshal(m.Result, &rt)
	return &mcp.ProvidedResult{Body: m.Result, InputRequired: rt.ResultType == "input_required"}, nil
}

// lastMessage reads the JSON-RPC response of an answer: the JSON body, or
// the last message of an SSE stream (its notifications went to the owner's
// front request, which is this replica's forward, and are dropped).
func lastMessage(resp *http.Response) ([]byte, error) {
	r := io.LimitReader(resp.Body, maxForwardBody)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		return io.ReadAll(r)
	case "text/event-stream":
		er := iclient.NewEventReader(r)
		var last []byte
		for {
			ev, err := er.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			if len(bytes.TrimSpace(ev.Data)) > 0 {
				last = ev.Data
			}
		}
		if last == nil {
			return nil, errors.New("an empty event stream")
		}
		return last, nil
	}
	return nil, errors.New("HTTP " + resp.Status + " with content type " + mt)
}

// httpClient is the client that forwards retries.
func (b *Bridge) httpClient() *http.Client {
	if b.opts.ForwardClient != nil {
		return b.opts.ForwardClient
	}
	return http.DefaultClient
}
