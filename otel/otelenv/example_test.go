package otelenv_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/otel/otelenv"
)

// A server and a client instrumented from the environment: here OTEL_TRACES_EXPORTER=console,
// so the spans go to Options.Console; a deployment sets OTEL_TRACES_EXPORTER=otlp and
// OTEL_EXPORTER_OTLP_ENDPOINT instead, and the program stays the same.
func ExampleSetup() {
	os.Setenv("OTEL_TRACES_EXPORTER", "console")
	defer os.Unsetenv("OTEL_TRACES_EXPORTER")
	ctx := context.Background()

	var spans strings.Builder
	serverICs, clientICs, shutdown, err := otelenv.SetupWith(ctx, &otelenv.Options{Console: &spans, NoGlobal: true})
	if err != nil {
		log.Fatal(err)
	}
	s := mcp.NewServer(&mcp.ServerOptions{Interceptors: serverICs})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct {
			Text string `json:"text"`
		}) (string, error) {
			return in.Text, nil
		})
	c, err := client.Connect(ctx, &client.MemoryTransport{Server: s}, &client.Options{Interceptors: clientICs})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "hi"}); err != nil {
		log.Fatal(err)
	}
	c.Close()
	if err := shutdown(ctx); err != nil { // flushes the batched spans
		log.Fatal(err)
	}
	fmt.Println(strings.Count(spans.String(), `"Name":"tools/call echo"`), "spans named tools/call echo (client and server)")
	// Output:
	// 2 spans named tools/call echo (client and server)
}
