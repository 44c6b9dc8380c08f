package mcpwire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	iclient "github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Protocol versions a Request carries by default.
const (
	// Modern is the revision of a modern (stateless) request.
	Modern = protocol.LatestVersion
	// Legacy is the revision of a legacy (initialize-era) request.
	Legacy = protocol.LegacyVersion
)

// MetaFields are the _meta members every modern request carries by
// default: the protocol version and empty client capabilities.
const MetaFields = `"` + protocol.MetaProtocolVersion + `":"` + Modern + `","` + protocol.MetaClientCapabilities + `":{}`

// Request is one JSON-RPC request as a test sends it. Its zero value (with
// a Method) is a well-formed 2026-07-28 request with id 1, the _meta that
// revision requires and, over HTTP, the headers that match its body. Each
// other field breaks or changes one rule.
type Request struct {
	// Method is the JSON-RPC method.
	Method string
	// Params is the params object without _meta, as JSON text; "" means
	// an object with nothing but _meta.
	Params string
	// ID is the JSON text of the request id; "" means 1.
	ID string
	// Notification makes the message a notification: no id.
	Notification bool
	// Meta holds extra _meta members, an encoded list such as
	// `"progressToken":1`.
	Meta string
	// Caps is the client capabilities object of a modern request; ""
	// means {}.
	Caps string
	// Version is the protocol version, in _meta and in the
	// MCP-Protocol-Version header; "" means Modern, or Legacy for a
	// legacy request.
	Version string
	// NoMeta leaves out the revision's _meta members (Meta is still
	// sent, alone): a modern request without them is invalid.
	NoMeta bool

	// Legacy makes it a legacy request: no revision _meta members, and
	// over HTTP the MCP-Protocol-Version and Mcp-Session-Id headers only
	// once Session is set (the initialize request carries neither).
	Legacy bool
	// Session is the legacy Mcp-Session-Id.
	Session string

	// Name, when set, is sent verbatim as the Mcp-Name header instead of
	// the value derived from the body.
	Name string

	// Header is applied to the derived headers last: each key replaces
	// that header, and a key with no values removes it.
	Header http.Header
	// Body, when set, is sent instead of the built body (malformed JSON,
	// a batch, a mismatch between body and headers). The headers are
	// still derived from the other fields.
	Body []byte
	// HTTPMethod is the HTTP method; "" means POST.
	HTTPMethod string
}

// Initialize returns a legacy initialize request for version ("" means
// Legacy) declaring the client capabilities caps ("" means {}).
func Initialize(version, caps string) Request {
	if version == "" {
		version = Legacy
	}
	if caps == "" {
		caps = "{}"
	}
	return Request{
		Legacy:  true,
		ID:      "0",
		Method:  "initialize",
		Version: version,
		Params:  `{"protocolVersion":` + quote(version) + `,"capabilities":` + caps + `,"clientInfo":{"name":"test","version":"1"}}`,
	}
}

func (r Request) version() string {
	switch {
	case r.Version != "":
		return r.Version
	case r.Legacy:
		return Legacy
	}
	return Modern
}

// MetaMembers returns the members of the _meta object as sent, without
// the braces: the revision's members (unless Legacy or NoMeta), then Meta.
// It is "" when there are none.
func (r Request) MetaMembers() string {
	var meta []string
	if !r.Legacy && !r.NoMeta {
		caps := r.Caps
		if caps == "" {
			caps = "{}"
		}
		meta = append(meta, `"`+protocol.MetaProtocolVersion+`":`+quote(r.version()), `"`+protocol.MetaClientCapabilities+`":`+caps)
	}
	if r.Meta != "" {
		meta = append(meta, r.Meta)
	}
	return strings.Join(meta, ",")
}

// ParamsJSON returns the params object as sent: Params with _meta spliced
// in after its other members.
func (r Request) ParamsJSON() string {
	meta := r.MetaMembers()
	params := strings.TrimSpace(r.Params)
	if meta == "" {
		if params == "" {
			return "{}"
		}
		return params
	}
	m := `"_meta":{` + meta + `}`
	if params == "" || len(params) >= 2 && strings.TrimSpace(params[1:len(params)-1]) == "" { // {} or { }
		return "{" + m + "}"
	}
	return params[:len(params)-1] + "," + m + "}"
}

// Bytes returns the message as sent: Body when set, else the built
// JSON-RPC request.
func (r Request) Bytes() []byte {
	if r.Body != nil {
		return r.Body
	}
	b := []byte(`{"jsonrpc":"2.0",`)
	if !r.Notification {
		id := r.ID
		if id == "" {
			id = "1"
		}
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	b = wire.AppendString(b, r.Method)
	b = append(b, `,"params":`...)
	b = append(b, r.ParamsJSON()...)
	return append(b, '}')
}

// Message returns the message decoded as jsonrpc.Decode decodes it, for
// tests that hand it to a server's Handle seam without HTTP.
func (r Request) Message() (jsonrpc.Message, *jsonrpc.Error) { return jsonrpc.Decode(r.Bytes()) }

// Headers returns the HTTP headers a client sends with the request:
// Content-Type, Accept, and for a modern request MCP-Protocol-Version,
// Mcp-Method and Mcp-Name as internal/client derives them from the body;
// for a legacy request in a session, Mcp-Session-Id and
// MCP-Protocol-Version. Header is applied last.
func (r Request) Headers() http.Header {
	h := http.Header{}
	if !r.Legacy {
		var params map[string]json.RawMessage
		json.Unmarshal([]byte(r.Params), &params) // a malformed Params has no Mcp-Name
		h = iclient.ModernHeaders(r.version(), r.Method, params)
		if r.Name != "" {
			h.Set(protocol.HeaderName, r.Name)
		}
	} else if r.Session != "" {
		h.Set(protocol.HeaderSessionID, r.Session)
		h.Set(protocol.HeaderProtocolVersion, r.version())
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	for k, v := range r.Header {
		if len(v) == 0 {
			h.Del(k)
			continue
		}
		h[http.CanonicalHeaderKey(k)] = v
	}
	return h
}

func (r Request) httpMethod() string {
	if r.HTTPMethod == "" {
		return http.MethodPost
	}
	return r.HTTPMethod
}

// NewRequest returns the request as an outgoing HTTP request to url.
func (r Request) NewRequest(ctx context.Context, url string) (*http.Request, error) {
	var body io.Reader
	if r.httpMethod() == http.MethodPost {
		body = bytes.NewReader(r.Bytes())
	}
	req, err := http.NewRequestWithContext(ctx, r.httpMethod(), url, body)
	if err != nil {
		return nil, err
	}
	req.Header = r.Headers()
	return req, nil
}

// ServerRequest returns the request as an incoming HTTP request to /mcp,
// for a handler's ServeHTTP in the test's own goroutine (no network, so
// it can run in a synctest bubble).
func (r Request) ServerRequest() *http.Request {
	var body io.Reader
	if r.httpMethod() == http.MethodPost {
		body = bytes.NewReader(r.Bytes())
	}
	req := httptest.NewRequest(r.httpMethod(), "/mcp", body)
	req.Header = r.Headers()
	return req
}

// Response is an HTTP response read to its end.
type Response struct {
	Status int
	Header http.Header
	// Raw is the whole body.
	Raw []byte
	// Messages are the JSON-RPC messages of the body in order: the one
	// JSON body, or the data of every SSE event. It is nil for another
	// content type.
	Messages []json.RawMessage
}

// ContentType returns the media type of the response, without
// parameters.
func (r *Response) ContentType() string {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt
}

// Last returns the last message (on a response stream, the response that
// follows the notifications), or nil.
func (r *Response) Last() json.RawMessage {
	if len(r.Messages) == 0 {
		return nil
	}
	return r.Messages[len(r.Messages)-1]
}

// Decode decodes the last message into v and fails the test when there is
// none or it does not decode.
func (r *Response) Decode(tb testing.TB, v any) {
	tb.Helper()
	last := r.Last()
	if last == nil {
		tb.Fatalf("HTTP %d %s: no JSON-RPC message in %q", r.Status, r.Header.Get("Content-Type"), r.Raw)
	}
	if err := json.Unmarshal(last, v); err != nil {
		tb.Fatalf("decoding %s: %v", last, err)
	}
}

// Read reads resp to its end and closes its body.
func Read(resp *http.Response) (*Response, error) {
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return parsed(resp.StatusCode, resp.Header, raw)
}

func parsed(status int, h http.Header, raw []byte) (*Response, error) {
	r := &Response{Status: status, Header: h, Raw: raw}
	msgs, err := Messages(r.ContentType(), raw)
	if err != nil {
		return r, fmt.Errorf("HTTP %d: %w", status, err)
	}
	r.Messages = msgs
	return r, nil
}

// Messages returns the JSON-RPC messages of a body of media type ct: the
// body itself for application/json, the data of each event for
// text/event-stream (skipping priming events, whose data is empty), and
// none for any other type. A message that is not JSON is an error.
func Messages(ct string, raw []byte) ([]json.RawMessage, error) {
	var msgs []json.RawMessage
	switch ct {
	case "application/json":
		msgs = append(msgs, json.RawMessage(raw))
	case "text/event-stream":
		er := iclient.NewEventReader(bytes.NewReader(raw))
		for {
			ev, err := er.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			if len(bytes.TrimSpace(ev.Data)) == 0 {
				continue // a priming event (an id for resumption, no message)
			}
			msgs = append(msgs, json.RawMessage(ev.Data))
		}
	default:
		return nil, nil
	}
	for _, m := range msgs {
		if !json.Valid(m) {
			return nil, fmt.Errorf("message is not JSON: %q", m)
		}
	}
	return msgs, nil
}

// Send sends r to url with http.DefaultClient and returns the response
// unread, for tests that read a stream as it comes. It fails the test
// when the request cannot be sent.
func Send(tb testing.TB, ctx context.Context, url string, r Request) *http.Response {
	tb.Helper()
	req, err := r.NewRequest(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	return resp
}

// Post sends r to url and reads the whole response. It fails the test when
// the request cannot be sent or a message of the response is not JSON.
func Post(tb testing.TB, ctx context.Context, url string, r Request) *Response {
	tb.Helper()
	resp, err := Read(Send(tb, ctx, url, r))
	if err != nil {
		tb.Fatalf("%s: %v", r.Method, err)
	}
	return resp
}

// Serve has h serve r in the calling goroutine, through a
// ResponseRecorder, and returns the response. It fails the test when a
// message of the response is not JSON.
func Serve(tb testing.TB, h http.Handler, r Request) *Response {
	tb.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r.ServerRequest())
	resp, err := parsed(rec.Code, rec.Header(), rec.Body.Bytes())
	if err != nil {
		tb.Fatalf("%s: %v", r.Method, err)
	}
	return resp
}

func quote(s string) string { return string(wire.AppendString(nil, s)) }
