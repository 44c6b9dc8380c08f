package mcptest_test

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// exampleT stands in for the *testing.T a real test passes.
type exampleT struct{ cleanups []func() }

func (t *exampleT) Helper()                           {}
func (t *exampleT) Cleanup(f func())                  { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (t *exampleT) Context() context.Context          { return context.Background() }
func (t *exampleT) done() {
	for _, f := range t.cleanups {
		f()
	}
}

type greetIn struct {
	Name string `json:"name"`
}

func ExampleNewClient() {
	t := &exampleT{} // in a test: the *testing.T
	defer t.done()

	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "greeter", Version: "1.0.0"}})
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone."},
		func(ctx context.Context, req *mcp.ToolRequest, in greetIn) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})

	c := mcptest.NewClient(t, s)
	d, err := c.Discover()
	if err != nil {
		panic(err)
	}
	fmt.Println(d.ServerInfo.Name, d.SupportedVersions)
	res, err := c.CallTool("greet", map[string]any{"name": "Ada"})
	fmt.Println(res.Text(), err)
	// Output:
	// greeter [2026-07-28 2025-11-25 2025-06-18 2025-03-26 2024-11-05]
	// Hello, Ada! <nil>
}

func ExampleElicit() {
	t := &exampleT{} // in a test: the *testing.T
	defer t.done()

	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "asker", Version: "1.0.0"}})
	mcp.AddTool(s, &mcp.Tool{Name: "hello", Description: "Asks for a name, then greets."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			r, err := req.Elicit("name", &mcp.ElicitParams{
				Message:         "What is your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
			})
			if err != nil {
				return "", err
			}
			var v greetIn
			if err := r.Decode(&v); err != nil {
				return "", err
			}
			return "Hello, " + v.Name + "!", nil
		})

	// Every elicitation is accepted with this content, in either era.
	for _, era := range [][]mcptest.Option{nil, {mcptest.Legacy()}} {
		c := mcptest.NewClient(t, s, append(era, mcptest.Elicit(map[string]any{"name": "Grace"}))...)
		res, err := c.CallTool("hello", nil)
		fmt.Println(res.Text(), err, c.Elicitations()[0].Message)
	}
	// Output:
	// Hello, Grace! <nil> What is your name?
	// Hello, Grace! <nil> What is your name?
}
