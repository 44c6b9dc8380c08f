package mcpwire_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
)

type echoIn struct {
	Text string `json:"text"`
}

func testServer() *mcp.Server {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "wire", Version: "1"}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text."}, func(ctx context.Context, req *mcp.ToolRequest, in echoIn) (string, error) {
		return in.Text, nil
	})
	return s
}

type reply struct {
	ID     json.RawMessage `json:"id"`
	Result map[string]any  `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestDefaultsAreValid checks that a Request with nothing but a method and
// params is one a real server answers with a result, in either era, and
// that each knob that breaks a rule makes the server say so.
func TestDefaultsAreValid(t *testing.T) {
	s := testServer()
	call := mcpwire.Request{Method: "tools/call", Params: `{"name":"echo","arguments":{"text":"hi"}}`}
	for _, c := range []struct {
		name     string
		req      mcpwire.Request
		wantCode int // 0: a result
	}{
		{"discover", mcpwire.Request{Method: "server/discover"}, 0},
		{"call", call, 0},
		{"id", mcpwire.Request{Method: "server/discover", ID: `"x"`}, 0},
		{"no meta", mcpwire.Request{Method: "server/discover", NoMeta: true}, -32602},
		{"bad version", mcpwire.Request{Method: "server/discover", Version: "2099-01-01"}, -32022},
		{"wrong name", func() mcpwire.Request {
			r := call
			r.Header = http.Header{"Mcp-Name": {"other"}}
			return r
		}(), -32020},
		{"no method header", func() mcpwire.Request {
			r := call
			r.Header = http.Header{"Mcp-Method": nil}
			return r
		}(), -32020},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := mcpwire.Serve(t, s, c.req)
			var got reply
			resp.Decode(t, &got)
			switch {
			case c.wantCode == 0 && got.Error != nil:
				t.Fatalf("error %d %s, want a result", got.Error.Code, got.Error.Message)
			case c.wantCode == 0 && got.Result == nil:
				t.Fatalf("no result: %s", resp.Raw)
			case c.wantCode != 0 && (got.Error == nil || got.Error.Code != c.wantCode):
				t.Fatalf("got %s, want error %d", resp.Raw, c.wantCode)
			}
			wantID := c.req.ID
			if wantID == "" {
				wantID = "1"
			}
			if string(got.ID) != wantID {
				t.Errorf("id %s, want %s", got.ID, wantID)
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	for _, c := range []struct {
		name string
		req  mcpwire.Request
		want http.Header
	}{
		{"tools/call", mcpwire.Request{Method: "tools/call", Params: `{"name":"héllo"}`}, http.Header{
			"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
			"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"=?base64?aMOpbGxv?="},
		}},
		{"resources/read", mcpwire.Request{Method: "resources/read", Params: `{"uri":"test://x"}`}, http.Header{
			"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
			"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"resources/read"}, "Mcp-Name": {"test://x"},
		}},
		{"legacy initialize", mcpwire.Initialize("", ""), http.Header{
			"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		}},
		{"legacy in session", mcpwire.Request{Legacy: true, Session: "s1", Method: "tools/list"}, http.Header{
			"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
			"Mcp-Session-Id": {"s1"}, "Mcp-Protocol-Version": {"2025-11-25"},
		}},
		{"override", mcpwire.Request{Method: "server/discover", Header: http.Header{"mcp-method": {"x"}, "Accept": nil}}, http.Header{
			"Content-Type": {"application/json"}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"x"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, c.req.Headers()); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		name string
		req  mcpwire.Request
		want string
	}{
		{"modern", mcpwire.Request{Method: "tools/list", Params: `{"cursor":"c"}`, Meta: `"progressToken":1`},
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}}`},
		{"caps", mcpwire.Request{Method: "server/discover", Caps: `{"elicitation":{}}`},
			`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`},
		{"notification", mcpwire.Request{Method: "notifications/cancelled", Notification: true, Legacy: true, Params: `{"requestId":1}`},
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`},
		{"legacy meta", mcpwire.Request{Legacy: true, Method: "tools/list", Meta: `"progressToken":1`},
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1}}}`},
		{"body", mcpwire.Request{Method: "tools/list", Body: []byte(`{not json`)}, `{not json`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := string(c.req.Bytes()); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestMessages(t *testing.T) {
	msgs, err := mcpwire.Messages("text/event-stream", []byte(": c\n\nid: 0\ndata: \n\nid: 1\ndata: {\"a\":1}\n\ndata: {\"b\":\ndata: 2}\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []json.RawMessage{json.RawMessage(`{"a":1}`), json.RawMessage("{\"b\":\n2}")}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if _, err := mcpwire.Messages("text/event-stream", []byte("data: nope\n\n")); err == nil {
		t.Error("an event that is not JSON: no error")
	}
	if msgs, err := mcpwire.Messages("text/plain", []byte("x")); err != nil || msgs != nil {
		t.Errorf("text/plain: %v, %v; want none", msgs, err)
	}
}

// TestLegacySession checks that Initialize and a request in the session it
// opens are what a legacy server accepts, and that the same request
// without the session is refused.
func TestLegacySession(t *testing.T) {
	s := testServer()
	resp := mcpwire.Serve(t, s, mcpwire.Initialize("", `{"roots":{}}`))
	var init reply
	resp.Decode(t, &init)
	if init.Result["protocolVersion"] != mcpwire.Legacy {
		t.Fatalf("initialize: %s", resp.Raw)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: no Mcp-Session-Id (HTTP %d)", resp.Status)
	}
	list := mcpwire.Request{Legacy: true, Session: sid, ID: "2", Method: "tools/list"}
	var got reply
	mcpwire.Serve(t, s, list).Decode(t, &got)
	if got.Error != nil || got.Result["tools"] == nil {
		t.Fatalf("tools/list in the session: %+v", got)
	}
	list.Session = "no-such-session"
	if resp := mcpwire.Serve(t, s, list); resp.Status != http.StatusNotFound {
		t.Errorf("tools/list in an unknown session: HTTP %d, want 404: %s", resp.Status, resp.Raw)
	}
}

func TestMessage(t *testing.T) {
	msg, err := mcpwire.Request{ID: `"a"`, Method: "tools/list"}.Message()
	if err != nil || msg.Method != "tools/list" || string(msg.ID.Raw()) != `"a"` {
		t.Errorf("Message: %+v, %v", msg, err)
	}
	if _, err := (mcpwire.Request{Method: "tools/list", Body: []byte(`{`)}).Message(); err == nil {
		t.Error("a malformed body decoded without error")
	}
}
