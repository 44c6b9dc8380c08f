package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// SSEConn is a connection over the deprecated HTTP+SSE transport of
// revision 2024-11-05: a GET opens an event stream whose first event,
// "endpoint", names the URL to POST messages to; responses arrive as
// "message" events on the stream.
type SSEConn struct {
	url      string
	endpoint string
	client   *http.Client
	header   http.Header
	ids      ids
	mux      *mux
	cancel   context.CancelFunc
	body     io.Closer
	handlerSlot
}

// NotSSEError says that a GET did not open an HTTP+SSE stream: Reply holds
// what came back instead.
type NotSSEError struct {
	Reply  *Reply
	Reason string
}

func (e *NotSSEError) Error() string { return "not an HTTP+SSE endpoint: " + e.Reason }

// DialSSE opens the event stream at url and waits (bounded by ctx) for the
// endpoint event.
func DialSSE(ctx context.Context, url string, opts *HTTPOptions) (*SSEConn, error) {
	c := &SSEConn{url: url, mux: newMux()}
	if opts != nil {
		c.header = opts.Header.Clone()
		c.client = opts.Client
	}
	c.client = httpClient(c.client)
	// The stream outlives ctx, which only bounds the wait for the endpoint.
	sctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	hr, err := http.NewRequestWithContext(sctx, http.MethodGet, url, nil)
	if err != nil {
		cancel()
		return nil, &TransportError{Op: "GET " + url, Err: err}
	}
	for k, v := range c.header {
		hr.Header[k] = v
	}
	hr.Header.Set("Accept", "text/event-stream")
	type opened struct {
		resp *http.Response
		err  error
	}
	ch := make(chan opened, 1)
	go func() {
		resp, err := c.client.Do(hr)
		ch <- opened{resp, err}
	}()
	var resp *http.Response
	select {
	case o := <-ch:
		if o.err != nil {
			cancel()
			return nil, &TransportError{Op: "GET " + url, Err: unwrapURLError(o.err)}
		}
		resp = o.resp
	case <-ctx.Done():
		cancel()
		return nil, ctxErr(ctx)
	}
	r := &Reply{Status: resp.StatusCode, Header: resp.Header}
	if resp.StatusCode != http.StatusOK || !isEventStream(resp.Header) {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, keepBody))
		resp.Body.Close()
		cancel()
		r.Body = b
		r.Msg = parseResponse(b, jsonrpc.ID{})
		return nil, &NotSSEError{Reply: r, Reason: fmt.Sprintf("GET answered %s", r.Describe())}
	}
	c.body = resp.Body
	sr := newSSEReader(resp.Body)
	type first struct {
		ev  Event
		err error
	}
	fc := make(chan first, 1)
	go func() {
		ev, err := sr.Next()
		fc <- first{ev, err}
	}()
	var f first
	select {
	case f = <-fc:
	case <-ctx.Done():
		c.closeStream()
		return nil, ctxErr(ctx)
	}
	if f.err != nil {
		c.closeStream()
		return nil, &NotSSEError{Reply: r, Reason: "the event stream ended before an endpoint event: " + f.err.Error()}
	}
	if f.ev.Name != "endpoint" {
		c.closeStream()
		r.Body = f.ev.Data
		return nil, &NotSSEError{Reply: r, Reason: fmt.Sprintf("the first event is %q, not \"endpoint\"", f.ev.Name)}
	}
	ep, err := resolveEndpoint(url, string(bytes.TrimSpace(f.ev.Data)))
	if err != nil {
		c.closeStream()
		return nil, &NotSSEError{Reply: r, Reason: err.Error()}
	}
	c.endpoint = ep
	go c.readLoop(sr)
	return c, nil
}

// resolveEndpoint resolves the endpoint event's URI against the stream URL
// and insists on the same origin, as 2024-11-05 requires.
func resolveEndpoint(base, ref string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	r, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("endpoint event %q is not a URI: %v", ref, err)
	}
	u := b.ResolveReference(r)
	if u.Scheme != b.Scheme || u.Host != b.Host {
		return "", fmt.Errorf("endpoint %q is not on the origin of %s", u, base)
	}
	return u.String(), nil
}

func (c *SSEConn) closeStream() {
	c.cancel()
	if c.body != nil {
		c.body.Close()
	}
}

func (c *SSEConn) readLoop(sr *sseReader) {
	for {
		ev, err := sr.Next()
		if err != nil {
			if errors.Is(err, errEventTooLarge) {
				c.mux.fail(ErrTooLarge)
			} else {
				c.mux.fail(ErrClosed)
			}
			return
		}
		if ev.Name != "message" {
			continue
		}
		m := parseMessage(ev.Data)
		switch {
		case m == nil:
		case m.IsResponse():
			c.mux.deliver(m, bytes.Clone(ev.Data))
		case m.IsNotification():
			raw := bytes.Clone(ev.Data)
			c.mux.note(raw)
			c.notify(nil, raw, m)
		default: // a request from the server
			c.serveRequest(context.Background(), m, nil, func(ctx context.Context, msg []byte) { c.postMessage(ctx, msg) })
		}
	}
}

// Endpoint returns the URL messages are posted to.
func (c *SSEConn) Endpoint() string { return c.endpoint }

// Transport returns protocol.TransportSSE.
func (c *SSEConn) Transport() string { return protocol.TransportSSE }

// URL returns the URL the stream was opened at (not the endpoint that
// the server named for posting).
func (c *SSEConn) URL() string { return c.url }

func (c *SSEConn) postMessage(ctx context.Context, body []byte) (*Reply, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &TransportError{Op: "POST " + c.endpoint, Err: err}
	}
	for k, v := range c.header {
		hr.Header[k] = v
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctxErr(ctx)
		}
		return nil, &TransportError{Op: "POST " + c.endpoint, Err: unwrapURLError(err)}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, keepBody))
	return &Reply{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// RoundTrip implements Conn: it posts the request and waits for its
// response on the event stream. If the POST itself is refused (a status
// other than 2xx), that reply is returned.
func (c *SSEConn) RoundTrip(ctx context.Context, req *Request) (*Reply, error) {
	id := c.ids.next()
	if req.OnID != nil {
		req.OnID(id)
	}
	ch, err := c.mux.register(id)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	pr, err := c.postMessage(ctx, jsonrpc.AppendRequest(nil, id, req.Method, req.Params))
	if err != nil {
		c.mux.forget(id)
		return nil, err
	}
	if pr.Status < 200 || pr.Status > 299 {
		c.mux.forget(id)
		pr.Msg = parseResponse(pr.Body, id)
		pr.Latency = time.Since(start)
		return pr, nil
	}
	r, err := c.mux.wait(ctx, id, ch, start)
	if err != nil && ctx.Err() != nil && req.Cancel {
		nctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c.postMessage(nctx, jsonrpc.AppendNotification(nil, "notifications/cancelled", cancelledParams(id, ctx.Err().Error())))
		cancel()
	}
	if r != nil {
		r.Status = pr.Status
	}
	return r, err
}

// Notify implements Conn.
func (c *SSEConn) Notify(ctx context.Context, req *Request) (*Reply, error) {
	return c.postMessage(ctx, jsonrpc.AppendNotification(nil, req.Method, req.Params))
}

// Close implements Conn: it closes the event stream.
func (c *SSEConn) Close() error {
	c.closeStream()
	c.mux.fail(ErrClosed)
	c.client.CloseIdleConnections()
	return nil
}
