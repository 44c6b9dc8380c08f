// Package mcptest tests MCP servers in-process. NewClient connects the
// public client (package github.com/mcpkit/mcpkit/client) to an
// *mcp.Server in memory, with no socket and no process, speaking protocol
// revision 2026-07-28 (or, with Legacy, the 2025-11-25 session protocol):
//
//	func TestEcho(t *testing.T) {
//		c := mcptest.NewClient(t, newServer())
//		res, err := c.CallTool("echo", map[string]any{"text": "hi"})
//		if err != nil || res.Text() != "hi" {
//			t.Fatalf("echo: %v, %v", res, err)
//		}
//	}
//
// Options declare client capabilities and answer the server's requests
// for input automatically: Elicit, Sample and Roots, in either era (as
// input_required rounds at 2026-07-28, as server requests in a legacy
// session). HTTP serves the server on a loopback httptest server instead,
// for tests of HTTP headers and status codes. JSON-RPC errors come back as
// *mcp.Error, so a test can check the code with errors.As. The guide is
// docs/testing.md.
package mcptest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/testkey"
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

// An Option configures NewClient.
type Option func(*config)

type config struct {
	legacy bool
	http   bool
	opts   client.Options
	edits  []func(*client.Options)
}

// Legacy connects as a 2025-11-25 client: an initialize handshake, then
// the session protocol (over an in-memory stdio pipe, or a Streamable HTTP
// session with HTTP).
func Legacy() Option { return func(c *config) { c.legacy = true } }

// HTTP serves the server on an httptest server bound to 127.0.0.1 and
// connects over Streamable HTTP, for tests that look at HTTP headers
// (Mcp-Param-*, say) or status codes. Client.URL returns its URL.
func HTTP() Option { return func(c *config) { c.http = true } }

// Elicit answers every elicitation request by accepting it with content
// (for a URL-mode request, content is ignored), and declares the
// elicitation capability, form and URL mode.
func Elicit(content map[string]any) Option {
	return ElicitWith(func(p *mcp.ElicitParams) *mcp.ElicitResult {
		if p.Mode == mcp.ElicitModeURL {
			return &mcp.ElicitResult{Action: mcp.ElicitAccept}
		}
		return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: content}
	})
}

// ElicitWith answers every elicitation request with what answer returns
// (decline or cancel, say), and declares the elicitation capability.
func ElicitWith(answer func(p *mcp.ElicitParams) *mcp.ElicitResult) Option {
	return func(c *config) {
		c.opts.Elicit = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return answer(p), nil
		}
		c.opts.ElicitURL = true
	}
}

// Sample answers every sampling request with an assistant message of
// text, from the model "mcptest", and declares the sampling capability.
func Sample(text string) Option {
	return func(c *config) {
		c.opts.Sample = func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: []mcp.Content{&mcp.TextContent{Text: text}}, Model: "mcptest", StopReason: "endTurn"}, nil
		}
	}
}

// Roots answers roots/list with roots and declares the roots capability.
func Roots(roots ...mcp.Root) Option {
	return func(c *config) {
		c.opts.Roots = func(ctx context.Context) ([]mcp.Root, error) { return roots, nil }
	}
}

// ClientOptions edits the client's options after the other options are
// applied: handlers of the test's own, ClientInfo, extensions.
func ClientOptions(edit func(*client.Options)) Option {
	return func(c *config) { c.edits = append(c.edits, edit) }
}

// Client is a test client connected to one server. Its methods are safe
// for concurrent use and bounded by a 10 second timeout each (or the
// test's deadline).
type Client struct {
	tb  TB
	c   *client.Client
	url string

	mu        sync.Mutex
	elicits   []*mcp.ElicitParams
	samplings []*mcp.CreateMessageParams
}

// NewClient connects a client to s, in memory unless HTTP is given. A
// server with no requestState key configured (ServerOptions.State.Keys,
// MCPKIT_STATE_KEYS) seals with a fixed test key and logs nothing about it.
// The client (and the httptest server) are closed when the test ends; a
// failure to connect fails the test.
func NewClient(tb TB, s *mcp.Server, options ...Option) *Client {
	tb.Helper()
	if s == nil {
		tb.Fatalf("mcptest.NewClient: nil server")
		return nil
	}
	// A server without a requestState key of its own seals with a fixed
	// test key, quietly.
	testkey.Use(s)
	cfg := &config{}
	for _, o := range options {
		o(cfg)
	}
	c := &Client{tb: tb}
	opts := cfg.opts
	opts.ClientInfo = mcp.Implementation{Name: "mcptest", Version: "1.0.0"}
	opts.Timeout = 10 * time.Second
	if cfg.legacy {
		opts.Eras = client.LegacyOnly
	} else {
		opts.Eras = client.ModernOnly
	}
	// Record what the server asked for, then answer as configured.
	if h := opts.Elicit; h != nil {
		opts.Elicit = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			c.mu.Lock()
			c.elicits = append(c.elicits, p)
			c.mu.Unlock()
			return h(ctx, p)
		}
	}
	if h := opts.Sample; h != nil {
		opts.Sample = func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			c.mu.Lock()
			c.samplings = append(c.samplings, p)
			c.mu.Unlock()
			return h(ctx, p)
		}
	}
	for _, e := range cfg.edits {
		e(&opts)
	}
	var tr client.Transport = &client.MemoryTransport{Server: s}
	if cfg.http {
		ts := httptest.NewServer(s)
		tb.Cleanup(ts.Close)
		c.url = ts.URL
		tr = &client.HTTPTransport{URL: ts.URL}
	}
	ctx, cancel := context.WithTimeout(c.ctx(), 10*time.Second)
	defer cancel()
	cc, err := client.Connect(ctx, tr, &opts)
	if err != nil {
		tb.Fatalf("mcptest.NewClient: %v", err)
		return nil
	}
	tb.Cleanup(func() { cc.Close() })
	c.c = cc
	return c
}

// Client returns the underlying client, for everything this package has
// no helper for (Listen, tasks, completions, typed calls).
func (c *Client) Client() *client.Client { return c.c }

// URL returns the URL of the httptest server with HTTP, else "".
func (c *Client) URL() string { return c.url }

// Elicitations returns the elicitation requests the server sent so far.
func (c *Client) Elicitations() []*mcp.ElicitParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*mcp.ElicitParams(nil), c.elicits...)
}

// SamplingRequests returns the sampling requests the server sent so far.
func (c *Client) SamplingRequests() []*mcp.CreateMessageParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*mcp.CreateMessageParams(nil), c.samplings...)
}

func (c *Client) ctx() context.Context {
	if ctx := c.tb.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// Request sends one request and returns its result object. params is nil
// or any value that encodes to a JSON object; the era's _meta is added,
// and _meta members of params override the client's own.
// A JSON-RPC error is returned as an *mcp.Error whose Data is the error's
// data as a json.RawMessage.
func (c *Client) Request(method string, params any) (json.RawMessage, error) {
	var opts []client.CallOption
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var p struct {
			Meta map[string]any `json:"_meta"`
		}
		if json.Unmarshal(raw, &p) == nil && len(p.Meta) > 0 {
			opts = append(opts, client.WithMeta(p.Meta))
		}
	}
	return c.c.Call(c.ctx(), method, params, opts...)
}

// Discovery is what a server says about itself: its DiscoverResult (at
// 2026-07-28) or its InitializeResult (Legacy).
type Discovery struct {
	// SupportedVersions is nil for a legacy session.
	SupportedVersions []string
	Capabilities      mcp.ServerCapabilities
	// ServerInfo is the server's self-reported identity.
	ServerInfo   mcp.Implementation
	Instructions string
	// TTL is the freshness hint (ttlMs); CacheScope who may cache it.
	// Both are zero for a legacy session.
	TTL        time.Duration
	CacheScope mcp.CacheScope
}

// Discover calls server/discover (modern), or returns what initialize
// said (Legacy).
func (c *Client) Discover() (*Discovery, error) {
	if c.c.Era() == mcp.EraLegacy {
		d := &Discovery{Capabilities: *c.c.Capabilities(), Instructions: c.c.Instructions()}
		if si := c.c.ServerInfo(); si != nil {
			d.ServerInfo = *si
		}
		return d, nil
	}
	res, err := c.Request("server/discover", nil)
	if err != nil {
		return nil, err
	}
	var w struct {
		SupportedVersions []string               `json:"supportedVersions"`
		Capabilities      mcp.ServerCapabilities `json:"capabilities"`
		Instructions      string                 `json:"instructions"`
		TTLMs             *int64                 `json:"ttlMs"`
		CacheScope        mcp.CacheScope         `json:"cacheScope"`
		Meta              struct {
			ServerInfo *mcp.Implementation `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(res, &w); err != nil {
		return nil, fmt.Errorf("server/discover: %w", err)
	}
	d := &Discovery{SupportedVersions: w.SupportedVersions, Capabilities: w.Capabilities, Instructions: w.Instructions, CacheScope: w.CacheScope}
	if w.Meta.ServerInfo != nil {
		d.ServerInfo = *w.Meta.ServerInfo
	}
	if w.TTLMs != nil {
		d.TTL = time.Duration(*w.TTLMs) * time.Millisecond
	}
	return d, nil
}

// collect gathers an iterator's items, stopping at the first error.
func collect[T any](seq func(yield func(*T, error) bool)) ([]T, error) {
	var out []T
	for it, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, *it)
	}
	return out, nil
}

// ListTools lists the tools, following nextCursor through every page.
func (c *Client) ListTools() ([]mcp.Tool, error) { return collect(c.c.ListTools(c.ctx())) }

// ListResources lists the resources through every page.
func (c *Client) ListResources() ([]mcp.Resource, error) {
	return collect(c.c.ListResources(c.ctx()))
}

// ListResourceTemplates lists the resource templates through every page.
func (c *Client) ListResourceTemplates() ([]mcp.ResourceTemplate, error) {
	return collect(c.c.ListResourceTemplates(c.ctx()))
}

// ListPrompts lists the prompts through every page.
func (c *Client) ListPrompts() ([]mcp.Prompt, error) { return collect(c.c.ListPrompts(c.ctx())) }

// ReadResource reads the resource at uri.
func (c *Client) ReadResource(uri string) (*mcp.ReadResourceResult, error) {
	return c.c.ReadResource(c.ctx(), uri)
}

// ReadText reads the resource at uri and returns the text of its
// contents, joined with newlines; a resource with binary contents is an
// error.
func (c *Client) ReadText(uri string) (string, error) {
	res, err := c.ReadResource(uri)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, ct := range res.Contents {
		if ct.Blob != nil {
			return "", fmt.Errorf("resources/read %s: binary contents (%s)", uri, ct.MIMEType)
		}
		parts = append(parts, ct.Text)
	}
	return strings.Join(parts, "\n"), nil
}

// GetPrompt renders the named prompt with args.
func (c *Client) GetPrompt(name string, args map[string]string) (*mcp.GetPromptResult, error) {
	return c.c.GetPrompt(c.ctx(), name, args)
}

// PromptText renders the named prompt and returns the text of its
// messages, each as "ROLE: TEXT", one a line.
func (c *Client) PromptText(name string, args map[string]string) (string, error) {
	res, err := c.GetPrompt(name, args)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, m := range res.Messages {
		text := "(" + contentType(m.Content) + ")"
		if t, ok := m.Content.(*mcp.TextContent); ok {
			text = t.Text
		}
		lines = append(lines, string(m.Role)+": "+text)
	}
	return strings.Join(lines, "\n"), nil
}

func contentType(ct mcp.Content) string {
	b, _ := json.Marshal(ct)
	var w struct{ Type string }
	json.Unmarshal(b, &w)
	return w.Type
}

// ToolResult is the result of a tools/call.
type ToolResult struct {
	Content           []Content
	StructuredContent json.RawMessage
	IsError           bool
}

// DecodeStructured decodes the result's structuredContent into v (a pointer),
// as (*mcp.CallToolResult).DecodeStructured does: mcp.ErrNoStructuredContent
// when there is none.
func (r *ToolResult) DecodeStructured(v any) error {
	if r == nil {
		return mcp.ErrNoStructuredContent
	}
	return (&mcp.CallToolResult{StructuredContent: r.StructuredContent}).DecodeStructured(v)
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
// an error. Requests for input (elicitation, sampling, roots) are
// answered as the options say; without the option, the client declares
// no such capability. If the tool's input schema mirrors parameters into
// Mcp-Param-* headers (x-mcp-header, with HTTP), the client lists the
// tools once to learn the schema and sends the headers.
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
