package client

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	iclient "github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// fakeConn answers every request with the same JSON-RPC message, and
// passes notes to the request's notification callback first.
type fakeConn struct {
	reply []byte
	notes [][]byte
}

func (f *fakeConn) RoundTrip(ctx context.Context, req *iclient.Request) (*iclient.Reply, error) {
	for _, n := range f.notes {
		if m, err := jsonrpc.Decode(append([]byte(nil), n...)); err == nil && req.OnNotify != nil {
			req.OnNotify(n, &m)
		}
	}
	r := &iclient.Reply{Body: f.reply}
	if m, err := jsonrpc.Decode(append([]byte(nil), f.reply...)); err == nil && m.IsResponse() {
		r.Msg = &m
	}
	return r, nil
}
func (f *fakeConn) Notify(ctx context.Context, req *iclient.Request) (*iclient.Reply, error) {
	return &iclient.Reply{}, nil
}
func (f *fakeConn) Transport() string { return "fake" }
func (f *fakeConn) Close() error      { return nil }

// fuzzClient is a modern client whose every request gets result (or, if
// result is not an object, the raw reply).
func fuzzClient(reply []byte, notes [][]byte) *Client {
	conn := &fakeConn{reply: reply, notes: notes}
	c := &Client{
		sess:        iclient.NewModernSession(conn, mcp.LatestVersion, json.RawMessage(`{"name":"fuzz","version":"1"}`)),
		ev:          modernClient{},
		progress:    map[string]*callState{},
		headerTools: map[string]json.RawMessage{},
		subs:        map[string]func(*jsonrpc.Message){},
		legacySubs:  map[string]func(*jsonrpc.Message) bool{},
		scaps:       &mcp.ServerCapabilities{},
	}
	c.life, c.kill = context.WithCancel(context.Background())
	c.opts.MaxInputRounds = 3
	c.opts.Timeout = time.Second
	c.opts.Elicit = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
	}
	c.opts.Sample = func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}, nil
	}
	c.opts.Roots = func(ctx context.Context) ([]mcp.Root, error) { return nil, nil }
	c.caps = c.declaredCapabilities()
	c.meta, _ = json.Marshal(&c.caps)
	c.log = discardLogger()
	c.cache = newClientCache(NewCache(4), "", "")
	return c
}

// FuzzServerAnswers feeds any result a server could send to every call
// of the client: nothing may panic, hang or loop, and a result the
// client cannot use is an error, never a half-filled value.
func FuzzServerAnswers(f *testing.F) {
	for _, r := range []string{
		`{"content":[{"type":"text","text":"hi"}],"structuredContent":{"a":1}}`,
		`{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"x":{"type":"string","default":"d"}}}}}},"requestState":"s"}`,
		`{"resultType":"input_required","inputRequests":{"a":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"q"}}],"maxTokens":3}},"b":{"method":"roots/list"}}}`,
		`{"resultType":"task","taskId":"t1","status":"completed","result":{"content":[]}}`,
		`{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}}],"nextCursor":"c"}`,
		`{"contents":[{"uri":"u","blob":"AAE="}],"ttlMs":1000,"cacheScope":"public"}`,
		`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"u","text":"t"}}}]}`,
		`{"completion":{"values":["a"],"total":3,"hasMore":true}}`,
		`{"isError":true,"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
		`[]`, `null`, `{"resultType":7}`,
	} {
		f.Add([]byte(r), []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}`))
	}
	f.Add([]byte(`{"x":`), []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{}}}`))
	f.Fuzz(func(t *testing.T, result, note []byte) {
		reply := jsonrpc.AppendResult(nil, jsonrpc.IntID(1), result)
		if json.Valid(result) == false {
			reply = result // not even JSON: the raw body
		}
		c := fuzzClient(reply, [][]byte{note})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		opts := []CallOption{WithProgress(func(Progress) {}), WithLog(func(*LogMessage) {})}
		if r, err := c.CallTool(ctx, "t", map[string]any{"r": "v"}, opts...); err == nil && r == nil {
			t.Fatal("CallTool: no result and no error")
		} else if err != nil && !isExpected(err) {
			t.Fatalf("CallTool: unexpected error type %T: %v", err, err)
		}
		if _, task, err := c.StartTool(ctx, "t", nil); err == nil && task != nil {
			// A task that never ends would poll until the context does.
			wctx, wcancel := context.WithTimeout(ctx, 50*time.Millisecond)
			task.Wait(wctx)
			wcancel()
		}
		n := 0
		for _, err := range c.ListTools(ctx) {
			if n++; n > 10000 || err != nil {
				break
			}
		}
		for range c.ListResources(ctx) {
			if n++; n > 20000 {
				break
			}
		}
		if r, err := c.ReadResource(ctx, "u"); err == nil && r == nil {
			t.Fatal("ReadResource: no result and no error")
		}
		if r, err := c.GetPrompt(ctx, "p", nil); err == nil && r == nil {
			t.Fatal("GetPrompt: no result and no error")
		}
		if r, err := c.Complete(ctx, &CompleteParams{Ref: PromptRef("p")}); err == nil && r == nil {
			t.Fatal("Complete: no result and no error")
		}
		if ctx.Err() != nil {
			t.Fatal("the calls took longer than 5s")
		}
	})
}

func isExpected(err error) bool {
	var pe *ProtocolError
	var me *mcp.Error
	var te *ToolError
	return errors.As(err, &pe) || errors.As(err, &me) || errors.As(err, &te) || errors.Is(err, ErrTaskCancelled) ||
		errors.Is(err, ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || isInputError(err)
}

// isInputError matches the errors of answering an input request the
// server malformed.
func isInputError(err error) bool {
	return err != nil && len(err.Error()) > 0 && (contains(err.Error(), "answering input request") || contains(err.Error(), "decoding the result"))
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// FuzzHeaderDecls checks that any input schema is judged without a panic,
// and that a schema judged valid mirrors without an error for string
// arguments.
func FuzzHeaderDecls(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}`)
	f.Add(`{"properties":{"a":{"properties":{"b":{"type":"integer","x-mcp-header":"B"}}}}}`)
	f.Add(`{"items":{"x-mcp-header":"A"}}`)
	f.Add(`{"properties":{"a":{"type":"number","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}`)
	f.Fuzz(func(t *testing.T, schema string) {
		err := checkHeaderDecls(json.RawMessage(schema))
		if err == nil && !json.Valid([]byte(schema)) && len(schema) > 0 {
			t.Fatalf("invalid JSON %q judged valid", schema)
		}
	})
}

// FuzzApplyDefaults checks that any requested schema leaves the user's
// own answers untouched.
func FuzzApplyDefaults(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string","default":"x"},"b":{"default":3}}}`, "a")
	f.Fuzz(func(t *testing.T, schema, key string) {
		content := map[string]any{key: "mine"}
		out := applyDefaults(json.RawMessage(schema), content)
		if out[key] != "mine" {
			t.Fatalf("the answer to %q was replaced by %v", key, out[key])
		}
	})
}

// FuzzListenEvent checks the decoding of listen notifications.
func FuzzListenEvent(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`)
	f.Add(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"u"}}`)
	f.Fuzz(func(t *testing.T, msg string) {
		m, err := jsonrpc.Decode([]byte(msg))
		if err != nil || !m.IsNotification() {
			return
		}
		ev := listenEvent(&m)
		if (ev.Acknowledged == nil) == (ev.Notification == nil) {
			t.Fatalf("event %+v is neither or both an acknowledgment and a notification", ev)
		}
		subscriptionID(m.Params)
		legacyWanted(ListenFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"u"}}, &m)
		decodeProgress(m.Params)
		decodeLog(m.Params)
	})
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
