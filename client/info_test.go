package client_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// fullInfo is an Implementation with every field set.
func fullInfo(name string) mcp.Implementation {
	return mcp.Implementation{
		Name: name, Title: "The " + name, Version: "1.2.3",
		Description: "What " + name + " does.",
		Icons:       []mcp.Icon{{Src: "https://example.com/" + name + ".png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: "dark"}},
		WebsiteURL:  "https://example.com/" + name,
	}
}

// infoSeen records, per method, the clientInfo a server received: as the
// request sent it (server/discover's _meta, initialize's params) and as
// the tool handler saw it in RequestInfo.
type infoSeen struct {
	mu   sync.Mutex
	sent map[string]mcp.Implementation
	tool mcp.Implementation
}

func infoServer(seen *infoSeen) *mcp.Server {
	record := func(ctx context.Context, c *mcp.Call, next mcp.CallHandler) mcp.Outcome {
		var p struct {
			ClientInfo *mcp.Implementation `json:"clientInfo"`
			Meta       struct {
				ClientInfo *mcp.Implementation `json:"io.modelcontextprotocol/clientInfo"`
			} `json:"_meta"`
		}
		json.Unmarshal(c.Params, &p)
		seen.mu.Lock()
		if p.ClientInfo != nil {
			seen.sent[c.Method] = *p.ClientInfo
		} else if p.Meta.ClientInfo != nil {
			seen.sent[c.Method] = *p.Meta.ClientInfo
		}
		seen.mu.Unlock()
		return next(ctx, c)
	}
	s := mcp.NewServer(&mcp.ServerOptions{Info: fullInfo("server"), Interceptors: []mcp.Interceptor{record}})
	mcp.AddTool(s, &mcp.Tool{Name: "who", Description: "Says nothing."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		seen.mu.Lock()
		seen.tool = req.Info.ClientInfo
		seen.mu.Unlock()
		return "ok", nil
	})
	return s
}

// The whole identity crosses in both directions, in both eras: the
// server's in ServerInfo, the client's in server/discover, initialize and
// every request, down to the handler's RequestInfo.
func TestImplementationWhole(t *testing.T) {
	for _, era := range []mcp.Era{mcp.EraModern, mcp.EraLegacy} {
		for _, tr := range []string{"memory", "http"} {
			t.Run(era.String()+"/"+tr, func(t *testing.T) {
				seen := &infoSeen{sent: map[string]mcp.Implementation{}}
				s := infoServer(seen)
				var transport client.Transport = &client.MemoryTransport{Server: s}
				if tr == "http" {
					hs := httptest.NewServer(s)
					defer hs.Close()
					transport = &client.HTTPTransport{URL: hs.URL}
				}
				want := fullInfo("client")
				c, err := client.Connect(t.Context(), transport, &client.Options{ClientInfo: want, Eras: only(era)})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if diff := cmp.Diff(fullInfo("server"), *c.ServerInfo()); diff != "" {
					t.Errorf("ServerInfo() (-want +got):\n%s", diff)
				}
				if _, err := c.CallTool(t.Context(), "who", nil); err != nil {
					t.Fatal(err)
				}
				first := "server/discover"
				if era == mcp.EraLegacy {
					first = "initialize"
				}
				seen.mu.Lock()
				defer seen.mu.Unlock()
				if diff := cmp.Diff(want, seen.sent[first]); diff != "" {
					t.Errorf("clientInfo sent in %s (-want +got):\n%s", first, diff)
				}
				if diff := cmp.Diff(want, seen.tool); diff != "" {
					t.Errorf("req.Info.ClientInfo in the handler (-want +got):\n%s", diff)
				}
			})
		}
	}
}
