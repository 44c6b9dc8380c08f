// Package mcptest tests MCP servers in-process. NewClient serves an
// *mcp.Server on a loopback httptest server and returns a client that
// speaks protocol revision 2026-07-28 to it over Streamable HTTP, with the
// _meta and MCP headers every request needs:
//
//	func TestEcho(t *testing.T) {
//		c := mcptest.NewClient(t, newServer())
//		res, err := c.CallTool("echo", map[string]any{"text": "hi"})
//		if err != nil || res.Text() != "hi" {
//			t.Fatalf("echo: %v, %v", res, err)
//		}
//	}
//
// JSON-RPC errors come back as *mcp.Error, so a test can check the code
// with errors.As.
package mcptest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// TB is the part of testing.TB that NewClient uses; *testing.T and
// *testing.B satisfy it.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
	Context() context.Context
}

// Client is a test client connected to one server. Its methods are safe
// for concurrent use and bounded by a 10 second timeout each.
type Client struct {
	tb  TB
	url string
	s   *client.Session
}

// NewClient serves s on a new httptest server bound to 127.0.0.1 and
// returns a client for it. The server and the client are closed when the
// test ends.
func NewClient(tb TB, s *mcp.Server) *Client {
	tb.Helper()
	if s == nil {
		tb.Fatalf("mcptest.NewClient: nil server")
		return nil
	}
	ts := httptest.NewServer(s)
	conn := client.DialHTTP(ts.URL, nil)
	c := &Client{
		tb:  tb,
		url: ts.URL,
		s:   client.NewModernSession(conn, mcp.LatestVersion, client.Implementation{Name: "mcptest", Version: "1.0.0"}),
	}
	tb.Cleanup(func() {
		conn.Close()
		ts.Close()
	})
	return c
}

// URL returns the URL the server is served at, for requests of the
// test's own.
func (c *Client) URL() string { return c.url }

func (c *Client) ctx() context.Context {
	if ctx := c.tb.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// Request sends one request and returns its result object. params is nil
// or any value that encodes to a JSON object; the required _meta members
// are added to whatever _meta it has. A JSON-RPC error is returned as an
// *mcp.Error whose Data is the error's data as a json.RawMessage.
func (c *Client) Request(method string, params any) (json.RawMessage, error) {
	res, err := c.s.Result(c.ctx(), method, params)
	var re *client.RPCError
	if errors.As(err, &re) {
		e := &mcp.Error{Code: re.Err.Code, Message: re.Err.Message}
		if len(re.Err.Data) > 0 {
			e.Data = re.Err.Data
		}
		return nil, e
	}
	return res, err
}

// Discovery is a server's DiscoverResult.
type Discovery struct {
	SupportedVersions []string
	Capabilities      mcp.ServerCapabilities
	// ServerInfo is the server's self-reported identity.
	ServerInfo   mcp.Implementation
	Instructions string
	// TTL is the freshness hint (ttlMs); CacheScope who may cache it.
	TTL        time.Duration
	CacheScope mcp.CacheScope
}

// Discover calls server/discover.
func (c *Client) Discover() (*Discovery, error) {
	res, err := c.Request("server/discover", nil)
	if err != nil {
		return nil, err
	}
	d, err := client.ParseDiscoverResult(res)
	if err != nil {
		return nil, fmt.Errorf("server/discover: %w", err)
	}
	out := &Discovery{SupportedVersions: d.SupportedVersions, Instructions: d.Instructions, CacheScope: mcp.CacheScope(d.CacheScope)}
	if d.Info != nil {
		out.ServerInfo = mcp.Implementation{Name: d.Info.Name, Title: d.Info.Title, Version: d.Info.Version}
	}
	if d.TTLMs != nil {
		out.TTL = time.Duration(*d.TTLMs) * time.Millisecond
	}
	if len(d.Capabilities) > 0 {
		if err := json.Unmarshal(d.Capabilities, &out.Capabilities); err != nil {
			return nil, fmt.Errorf("server/discover: capabilities: %w", err)
		}
	}
	return out, nil
}

// ListTools calls tools/list, following nextCursor through every page.
func (c *Client) ListTools() ([]mcp.Tool, error) {
	items, err := c.s.List(c.ctx(), "tools/list", "tools")
	if err != nil {
		var re *client.RPCError
		if errors.As(err, &re) {
			return nil, &mcp.Error{Code: re.Err.Code, Message: re.Err.Message, Err: err}
		}
		return nil, err
	}
	tools := make([]mcp.Tool, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it, &tools[i]); err != nil {
			return nil, fmt.Errorf("tools/list: tool %d: %w", i, err)
		}
	}
	return tools, nil
}

// ToolResult is the result of a tools/call.
type ToolResult struct {
	Content           []Content
	StructuredContent json.RawMessage
	IsError           bool
}

// Text returns the text of the result's text content items, joined with
// newlines.
func (r *ToolResult) Text() string {
	if r == nil {
		return ""
	}
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Content is one content item of a tool result, of any type.
type Content struct {
	// Type is "text", "image", "audio", "resource_link" or "resource".
	Type string
	// Text is the text of a text item.
	Text string
	// Data is the decoded data of an image or audio item.
	Data []byte
	// MIMEType is the MIME type of an image, audio or resource_link item.
	MIMEType string
	// URI is the URI of a resource_link item.
	URI string
	// Resource is the embedded resource of a resource item, as sent.
	Resource json.RawMessage
}

// CallTool calls the named tool with args (nil, or any value that encodes
// to a JSON object). A tool that failed is a result with IsError set, not
// an error. If the tool's input schema mirrors parameters into
// Mcp-Param-* headers (x-mcp-header), the client lists the tools once to
// learn the schema and sends the headers.
func (c *Client) CallTool(name string, args any) (*ToolResult, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	res, err := c.Request("tools/call", params)
	var e *mcp.Error
	if errors.As(err, &e) && e.Code == mcp.CodeHeaderMismatch {
		// The tool may want Mcp-Param-* headers: learn its schema, retry.
		if _, lerr := c.ListTools(); lerr == nil {
			res, err = c.Request("tools/call", params)
		}
	}
	if err != nil {
		return nil, err
	}
	var wire struct {
		Content []struct {
			Type     string          `json:"type"`
			Text     string          `json:"text"`
			Data     string          `json:"data"`
			MIMEType string          `json:"mimeType"`
			URI      string          `json:"uri"`
			Resource json.RawMessage `json:"resource"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(res, &wire); err != nil {
		return nil, fmt.Errorf("tools/call %q: %w", name, err)
	}
	out := &ToolResult{StructuredContent: wire.StructuredContent, IsError: wire.IsError}
	for _, w := range wire.Content {
		ct := Content{Type: w.Type, Text: w.Text, MIMEType: w.MIMEType, URI: w.URI, Resource: w.Resource}
		if w.Data != "" {
			b, err := base64.StdEncoding.DecodeString(w.Data)
			if err != nil {
				return nil, fmt.Errorf("tools/call %q: content data is not base64: %w", name, err)
			}
			ct.Data = b
		}
		out.Content = append(out.Content, ct)
	}
	return out, nil
}
