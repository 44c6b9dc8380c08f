package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// Listen yields an acknowledgment, then the notifications asked for.
func ExampleClient_Listen() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "docs"}})
	s.AddResource(&mcp.Resource{URI: "docs://readme", Name: "readme"}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "v2"}}}, nil
	})
	defer s.Shutdown(context.Background())
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ev, err := range c.Listen(ctx, client.ListenFilter{ResourceSubscriptions: []string{"docs://readme"}}) {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Acknowledged != nil {
			fmt.Println("acknowledged:", ev.Acknowledged.ResourceSubscriptions)
			s.NotifyResourceUpdated("docs://readme")
			continue
		}
		fmt.Println(ev.Notification.Method)
		break // stopping the iteration ends the subscription
	}
	// Output:
	// acknowledged: [docs://readme]
	// notifications/resources/updated
}

// A tool call the server runs as a task: StartTool returns its handle,
// and Wait polls it to the end.
func ExampleClient_StartTool() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "jobs"}})
	mcp.AddTool(s, &mcp.Tool{Name: "build", Description: "Builds.", TaskSupport: mcp.TaskRequired},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return "built", nil
		})
	defer s.Shutdown(context.Background())
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.MemoryTransport{Server: s}, &client.Options{Tasks: true})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_, task, err := c.StartTool(ctx, "build", nil)
	if err != nil {
		log.Fatal(err)
	}
	res, err := task.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.State.Status, res.Content[0].(*mcp.TextContent).Text)
	// Output: completed built
}

// A Cache shared by the clients of a gateway: public results are served
// to every client of the server, private ones only to clients with the
// same CacheCredential.
func ExampleNewCache() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "catalog"}})
	mcp.AddTool(s, &mcp.Tool{Name: "search", Description: "Searches the catalog."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{ Query string }) (string, error) {
			return "nothing found", nil
		})
	hs := httptest.NewServer(s)
	defer hs.Close()
	shared := client.NewCache(500)
	for _, user := range []string{"alice", "bob"} {
		c, err := client.Connect(context.Background(), &client.HTTPTransport{
			URL:    hs.URL,
			Header: http.Header{"Authorization": {"Bearer token-of-" + user}},
		}, &client.Options{Cache: shared, CacheCredential: user})
		if err != nil {
			log.Fatal(err)
		}
		for _, err := range c.ListTools(context.Background()) {
			if err != nil {
				log.Fatal(err)
			}
		}
		c.Close()
	}
	fmt.Println("results cached:", shared.Len())
	// Output: results cached: 1
}

// CallToolAs decodes structuredContent into a Go value.
func ExampleCallToolAs() {
	s := mcp.NewServer(nil)
	type Weather struct {
		City  string  `json:"city"`
		TempC float64 `json:"tempC"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "weather", Description: "Current weather."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{ City string }) (Weather, error) {
			return Weather{City: in.City, TempC: 21.5}, nil
		})
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.MemoryTransport{Server: s}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	w, err := client.CallToolAs[Weather](ctx, c, "weather", map[string]any{"City": "Lyon"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %.1f°C\n", w.City, w.TempC)
	// Output: Lyon: 21.5°C
}

// Call sends any method, here a custom one, with the era's _meta.
func ExampleClient_Call() {
	s := mcp.NewServer(nil)
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.MemoryTransport{Server: s}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.Call(ctx, "server/discover", nil, client.NoCache())
	if err != nil {
		log.Fatal(err)
	}
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	json.Unmarshal(res, &d)
	fmt.Println(d.SupportedVersions[0])
	// Output: 2026-07-28
}

// A tool's structured result, decoded into the caller's own type: the client fills
// StructuredContent with the raw JSON the server sent, and DecodeStructured decodes it.
func ExampleClient_CallTool_decodeStructured() {
	type forecast struct {
		City  string  `json:"city"`
		TempC float64 `json:"tempC"`
	}
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "weather"}})
	mcp.AddTool(s, &mcp.Tool{Name: "forecast", Description: "Tomorrow's weather."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (forecast, error) {
			return forecast{City: "Oslo", TempC: -3.5}, nil
		})
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.MemoryTransport{Server: s}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "forecast", nil)
	if err != nil {
		log.Fatal(err)
	}
	var f forecast
	if err := res.DecodeStructured(&f); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %.1f°C\n", f.City, f.TempC)
	// Output:
	// Oslo: -3.5°C
}
