package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// sseServer is a 2024-11-05 HTTP+SSE server: GET /sse opens the event
// stream (its first event names /messages), POST /messages takes a
// message and answers it on the stream. Its one tool asks the client to
// elicit before it answers. POST /sse is refused, as such servers do.
type sseServer struct {
	mu      sync.Mutex
	stream  chan string
	pending map[string]json.RawMessage // elicitation id -> tools/call id
}

func (s *sseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/sse" && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		fmt.Fprint(w, "event: endpoint\ndata: /messages?session=1\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case msg := <-s.stream:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case r.URL.Path == "/messages" && r.Method == http.MethodPost:
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		json.Unmarshal(body, &m)
		w.WriteHeader(http.StatusAccepted)
		send := func(id json.RawMessage, result string) {
			s.stream <- `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
		}
		switch m.Method {
		case "initialize":
			send(m.ID, `{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}`)
		case "tools/call":
			s.mu.Lock()
			s.pending[`"e1"`] = m.ID
			s.mu.Unlock()
			s.stream <- `{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`
		case "":
			s.mu.Lock()
			call := s.pending[string(m.ID)]
			s.mu.Unlock()
			var er struct {
				Content struct{ Name string } `json:"content"`
			}
			json.Unmarshal(m.Result, &er)
			send(call, `{"content":[{"type":"text","text":"hello `+er.Content.Name+`"}]}`)
		}
	default:
		http.Error(w, "not here", http.StatusMethodNotAllowed)
	}
}

func TestLegacyHTTPSSEFallback(t *testing.T) {
	hs := httptest.NewServer(&sseServer{stream: make(chan string, 16), pending: map[string]json.RawMessage{}})
	defer hs.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: hs.URL + "/sse"}, &client.Options{
		Elicit: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Era() != mcp.EraLegacy || c.ProtocolVersion() != "2024-11-05" {
		t.Errorf("era %s at %s, want legacy at 2024-11-05", c.Era(), c.ProtocolVersion())
	}
	if got := text(t)(c.CallTool(ctx, "greet", nil)); got != "hello Ada" {
		t.Errorf("greet = %q", got)
	}
}
