package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// maxBody bounds a JSON response body; keepBody bounds what a Reply keeps
// of it for diagnostics.
const (
	maxBody  = 16 << 20
	keepBody = 64 << 10
)

// HTTPOptions configures an HTTPConn. The zero value is usable.
type HTTPOptions struct {
	// Header is sent with every request (authorization, say).
	Header http.Header
	// Client sends the requests. Default: a client of its own with no
	// overall timeout (contexts bound each request). A client without a
	// CheckRedirect gets SameOriginRedirect (on a copy).
	Client *http.Client
}

// HTTPConn is a Streamable HTTP connection to one MCP endpoint: one POST
// per message, the response read as JSON or as an SSE stream. It keeps a
// legacy session id once SetSessionID was called.
type HTTPConn struct {
	url    string
	client *http.Client
	header http.Header
	ids    ids

	handlerSlot

	mu        sync.Mutex
	sessionID string // legacy Mcp-Session-Id
	version   string // legacy MCP-Protocol-Version after initialize
	// standalone stops the legacy session's GET stream.
	standalone context.CancelFunc
}

// DialHTTP returns a connection to the MCP endpoint at url. It does not
// contact the server.
func DialHTTP(url string, opts *HTTPOptions) *HTTPConn {
	c := &HTTPConn{url: url}
	if opts != nil {
		c.header = opts.Header.Clone()
		c.client = opts.Client
	}
	c.client = httpClient(c.client)
	return c
}

// URL returns the endpoint URL.
func (c *HTTPConn) URL() string { return c.url }

// Transport returns protocol.TransportStreamableHTTP.
func (c *HTTPConn) Transport() string { return protocol.TransportStreamableHTTP }

// setLegacy makes later requests carry the legacy session's headers:
// Mcp-Session-Id (when the server assigned one) and MCP-Protocol-Version.
func (c *HTTPConn) setLegacy(sessionID, version string) {
	c.mu.Lock()
	c.sessionID, c.version = sessionID, version
	c.mu.Unlock()
}

// SessionID returns the legacy session id, or "".
func (c *HTTPConn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// RoundTrip implements Conn.
func (c *HTTPConn) RoundTrip(ctx context.Context, req *Request) (*Reply, error) {
	id := c.ids.next()
	if req.OnID != nil {
		req.OnID(id)
	}
	body := jsonrpc.AppendRequest(nil, id, req.Method, req.Params)
	r, err := c.postReq(ctx, id, body, req.Header, req)
	if err != nil && ctx.Err() != nil && req.Cancel && c.isLegacy() {
		// A legacy server learns of a cancellation only from
		// notifications/cancelled; a modern one from the closed stream.
		nctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c.post(nctx, jsonrpc.ID{}, jsonrpc.AppendNotification(nil, "notifications/cancelled", cancelledParams(id, ctx.Err().Error())), nil)
		cancel()
	}
	return r, err
}

func (c *HTTPConn) isLegacy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version != ""
}

// Notify implements Conn.
func (c *HTTPConn) Notify(ctx context.Context, req *Request) (*Reply, error) {
	body := jsonrpc.AppendNotification(nil, req.Method, req.Params)
	return c.post(ctx, jsonrpc.ID{}, body, req.Header)
}

// PostRaw sends body as it is, for checks that need a malformed message.
func (c *HTTPConn) PostRaw(ctx context.Context, body []byte, header http.Header) (*Reply, error) {
	return c.post(ctx, jsonrpc.ID{}, body, header)
}

// Do sends an HTTP request with any method (a GET or DELETE for checks and
// for ending a legacy session) and reads the reply as RoundTrip does.
func (c *HTTPConn) Do(ctx context.Context, method string, header http.Header) (*Reply, error) {
	hr, err := http.NewRequestWithContext(ctx, method, c.url, nil)
	if err != nil {
		return nil, &TransportError{Op: method + " " + c.url, Err: err}
	}
	c.setHeaders(hr, header)
	if method == http.MethodGet {
		hr.Header.Set("Accept", "text/event-stream")
	}
	start := time.Now()
	resp, err := c.client.Do(hr)
	if err != nil {
		return nil, c.sendErr(ctx, hr, err)
	}
	defer resp.Body.Close()
	r := &Reply{Status: resp.StatusCode, Header: resp.Header}
	if isEventStream(resp.Header) {
		// A standalone stream: do not wait on it.
		r.Latency = time.Since(start)
		return r, nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, keepBody))
	r.Body = b
	r.Msg = parseResponse(b, jsonrpc.ID{})
	r.Latency = time.Since(start)
	return r, nil
}

// The values of the headers every POST carries, shared between requests.
// net/http only reads a request's headers; the capacity is the length, so
// that an append (Header.Add) copies instead of writing into them.
var (
	acceptValues      = []string{"application/json, text/event-stream"}
	contentTypeValues = []string{"application/json"}
)

// shared returns v capped at its length, for sharing it between requests'
// headers without a copy: an append to it reallocates.
func shared(v []string) []string { return v[:len(v):len(v)] }

func (c *HTTPConn) setHeaders(hr *http.Request, extra http.Header) {
	hr.Header["Accept"] = acceptValues
	for k, v := range c.header {
		hr.Header[k] = append([]string(nil), v...)
	}
	c.mu.Lock()
	sid, version := c.sessionID, c.version
	c.mu.Unlock()
	if sid != "" {
		hr.Header.Set(protocol.HeaderSessionID, sid)
	}
	if _, set := extra[protocol.HeaderProtocolVersion]; version != "" && !set {
		hr.Header.Set(protocol.HeaderProtocolVersion, version)
	}
	// extra (the caller's per-request headers, usually shared between
	// requests) is not changed by net/http: no copy of its values.
	for k, v := range extra {
		hr.Header[http.CanonicalHeaderKey(k)] = shared(v)
	}
}

func (c *HTTPConn) sendErr(ctx context.Context, hr *http.Request, err error) error {
	if ctx.Err() != nil {
		return ctxErr(ctx)
	}
	return &TransportError{Op: hr.Method + " " + c.url, Err: unwrapURLError(err)}
}

func unwrapURLError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

func (c *HTTPConn) post(ctx context.Context, id jsonrpc.ID, body []byte, header http.Header) (*Reply, error) {
	return c.postReq(ctx, id, body, header, nil)
}

// ErrTooLarge says that the server sent a message larger than the bound
// (16 MiB).
var ErrTooLarge = errors.New("the server sent a message larger than 16 MiB")

// maxResumes bounds how often one response stream is resumed with
// Last-Event-ID.
const maxResumes = 5

func (c *HTTPConn) postReq(ctx context.Context, id jsonrpc.ID, body []byte, header http.Header, req *Request) (*Reply, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, &TransportError{Op: "POST " + c.url, Err: err}
	}
	c.setHeaders(hr, header)
	if hr.Header.Get("Content-Type") == "" {
		hr.Header["Content-Type"] = contentTypeValues
	}
	start := time.Now()
	resp, err := c.client.Do(hr)
	if err != nil {
		return nil, c.sendErr(ctx, hr, err)
	}
	defer resp.Body.Close()
	r := &Reply{Status: resp.StatusCode, Header: resp.Header}
	if isEventStream(resp.Header) {
		sr := newSSEReader(resp.Body)
		err = c.readSSEResponse(ctx, sr, id, r, req)
		if r.Msg == nil && id.IsValid() && sr.LastEventID() != "" && ctx.Err() == nil && !errors.Is(err, errEventTooLarge) {
			// The stream ended before the response: resume it, as the
			// server's event ids offer, after the retry delay it set.
			err = c.resume(ctx, sr, id, r, req)
		}
		if errors.Is(err, errEventTooLarge) {
			err = ErrTooLarge
			r.TooLarge = true
		}
	} else {
		var b []byte
		b, err = io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
		if len(b) > maxBody {
			r.TooLarge = true
			b = b[:keepBody]
		}
		r.Body = b
		if len(r.Body) > keepBody {
			r.Body = r.Body[:keepBody]
		}
		if !r.TooLarge {
			// b is this response's own (io.ReadAll's fresh buffer, which
			// r.Body only reads): the message may point into it.
			r.Msg = checkResponse(parseOwned(b), id)
		}
	}
	r.Latency = time.Since(start)
	if err != nil && r.Msg == nil && ctx.Err() != nil {
		return r, ctxErr(ctx)
	}
	// Otherwise the status line arrived, so the server was reached: the
	// Reply says what came back, a broken body included.
	return r, nil
}

// parseResponse returns the JSON-RPC response in data if it answers id (or
// has a null id, as errors the server could not attribute do).
func parseResponse(data []byte, id jsonrpc.ID) *jsonrpc.Message {
	return checkResponse(parseMessage(data), id)
}

// checkResponse returns m when it is a response to id (or to no id).
func checkResponse(m *jsonrpc.Message, id jsonrpc.ID) *jsonrpc.Message {
	if m == nil || !m.IsResponse() {
		return nil
	}
	if m.ID.IsValid() && id.IsValid() && !m.ID.Equal(id) {
		return nil
	}
	return m
}

// resume reconnects to a response stream that ended early, with GET and
// Last-Event-ID, waiting the stream's retry delay (1s when it set none)
// first, at most maxResumes times.
func (c *HTTPConn) resume(ctx context.Context, sr *sseReader, id jsonrpc.ID, r *Reply, req *Request) error {
	lastID, retry := sr.LastEventID(), sr.Retry()
	for attempt := 0; attempt < maxResumes; attempt++ {
		if retry < 0 {
			retry = 1000
		}
		t := time.NewTimer(time.Duration(retry) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
		if err != nil {
			return err
		}
		c.setHeaders(hr, nil)
		hr.Header.Set("Accept", "text/event-stream")
		hr.Header.Set("Last-Event-ID", lastID)
		resp, err := c.client.Do(hr)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		if resp.StatusCode != http.StatusOK || !isEventStream(resp.Header) {
			resp.Body.Close()
			return fmt.Errorf("resuming the response stream: GET with Last-Event-ID answered HTTP %d", resp.StatusCode)
		}
		nsr := newSSEReader(resp.Body)
		nsr.lastID, nsr.retry = lastID, retry
		err = c.readSSEResponse(ctx, nsr, id, r, req)
		resp.Body.Close()
		if r.Msg != nil || errors.Is(err, errEventTooLarge) {
			return err
		}
		lastID, retry = nsr.LastEventID(), nsr.Retry()
	}
	return fmt.Errorf("the response stream ended %d times without the response", maxResumes+1)
}

// postAnswer posts the answer to a server request.
func (c *HTTPConn) postAnswer(ctx context.Context, msg []byte) {
	c.post(ctx, jsonrpc.ID{}, msg, nil)
}

// readSSEResponse reads an SSE response stream until the response to id
// arrives, passing notifications on (and collecting them in r) and
// answering the server's requests.
func (c *HTTPConn) readSSEResponse(ctx context.Context, sr *sseReader, id jsonrpc.ID, r *Reply, req *Request) error {
	for {
		ev, err := sr.Next()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if len(r.Body) < keepBody {
			r.Body = append(r.Body, ev.Data...)
			r.Body = append(r.Body, '\n')
		}
		if ev.Name != "message" {
			continue
		}
		m := parseMessage(ev.Data)
		switch {
		case m == nil:
		case m.IsNotification():
			raw := bytes.Clone(ev.Data)
			if len(r.Notifications) < 1000 {
				r.Notifications = append(r.Notifications, raw)
			}
			c.notify(req, raw, m)
		case m.IsRequest():
			c.serveRequest(context.WithoutCancel(ctx), m, nil, c.postAnswer)
		case m.IsResponse():
			if !m.ID.IsValid() || !id.IsValid() || m.ID.Equal(id) {
				r.Msg = m
				r.Body = bytes.Clone(ev.Data)
				return nil
			}
		}
	}
}

func isEventStream(h http.Header) bool {
	ct := h.Get("Content-Type")
	if ct == "application/json" {
		return false // the usual answer, without ParseMediaType's allocation
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "text/event-stream"
}

// Close implements Conn. It ends a legacy session with DELETE, as the
// legacy revisions ask; the reply is ignored.
func (c *HTTPConn) Close() error {
	c.mu.Lock()
	stop := c.standalone
	c.standalone = nil
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	if c.SessionID() != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c.Do(ctx, http.MethodDelete, nil)
		c.setLegacy("", "")
	}
	c.client.CloseIdleConnections()
	return nil
}

// OpenStandaloneStream opens the GET event stream of a legacy session,
// on which a legacy server sends the requests and notifications that are
// not tied to one of the client's requests (an elicitation/create from a
// tool, a list change). It runs until Close, resuming the stream with
// Last-Event-ID after a disconnect (waiting the retry the server set,
// 1s by default, and at most 30s after repeated failures); a server that
// answers the GET with anything but an event stream (405: it offers
// none) is not asked again.
//
// It returns once the server answered the first GET (a server may send a
// request on the stream as soon as the next tool runs), or after wait.
func (c *HTTPConn) OpenStandaloneStream(wait time.Duration) {
	c.mu.Lock()
	if c.standalone != nil || c.sessionID == "" && c.version == "" {
		c.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.standalone = cancel
	c.mu.Unlock()
	opened := make(chan struct{})
	go c.standaloneLoop(ctx, opened)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-opened:
	case <-t.C:
	}
}

func (c *HTTPConn) standaloneLoop(ctx context.Context, opened chan struct{}) {
	defer func() {
		if opened != nil {
			close(opened)
		}
	}()
	lastID, retry := "", int64(-1)
	failures := 0
	for ctx.Err() == nil {
		hr, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
		if err != nil {
			return
		}
		c.setHeaders(hr, nil)
		hr.Header.Set("Accept", "text/event-stream")
		if lastID != "" {
			hr.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := c.client.Do(hr)
		if opened != nil {
			close(opened)
			opened = nil
		}
		if err == nil {
			if resp.StatusCode != http.StatusOK || !isEventStream(resp.Header) {
				resp.Body.Close()
				return
			}
			sr := newSSEReader(resp.Body)
			sr.lastID, sr.retry = lastID, retry
			var r Reply
			got := c.readStandalone(ctx, sr, &r)
			resp.Body.Close()
			lastID, retry = sr.LastEventID(), sr.Retry()
			if got {
				failures = 0
			}
		}
		failures++
		wait := time.Second
		if retry >= 0 {
			wait = time.Duration(retry) * time.Millisecond
		}
		wait = min(wait*time.Duration(min(failures, 30)), 30*time.Second)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// readStandalone reads the standalone stream until it ends, reporting
// whether any event came.
func (c *HTTPConn) readStandalone(ctx context.Context, sr *sseReader, r *Reply) bool {
	got := false
	for {
		ev, err := sr.Next()
		if err != nil {
			return got
		}
		got = true
		if ev.Name != "message" {
			continue
		}
		m := parseMessage(ev.Data)
		switch {
		case m == nil:
		case m.IsNotification():
			c.notify(nil, bytes.Clone(ev.Data), m)
		case m.IsRequest():
			c.serveRequest(ctx, m, nil, c.postAnswer)
		}
	}
}
