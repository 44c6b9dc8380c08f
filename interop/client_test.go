package interop

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/interop/gosdkserver"
)

// TestClientCallsGoSDK calls a go-sdk tool with mcpkit's client in both
// eras: per-request _meta and MCP headers against the stateless server,
// the initialize handshake and session headers against the stateful one.
func TestClientCallsGoSDK(t *testing.T) {
	for _, mode := range []string{gosdkserver.HTTPStateless, gosdkserver.HTTPLegacy, gosdkserver.SSE} {
		t.Run(mode, func(t *testing.T) {
			h, err := gosdkserver.Handler(mode)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			defer ts.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := client.Connect(ctx, client.DialHTTP(ts.URL, nil), &client.Options{ClientInfo: client.Implementation{Name: "interop", Version: "1"}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.Result(ctx, "tools/call", map[string]any{"name": "echo2", "arguments": map[string]string{"text": "héllo"}})
			if err != nil {
				t.Fatalf("tools/call on a %s session: %v", s.Era(), err)
			}
			var r struct {
				Content []struct{ Text string } `json:"content"`
			}
			if json.Unmarshal(res, &r) != nil || len(r.Content) != 1 || r.Content[0].Text != "héllo" {
				t.Errorf("echo2 = %s", res)
			}
		})
	}
}
