// Command client is the conformance client of mcpkit: the official MCP
// conformance suite runs it once per client scenario, with the scenario
// server's URL as its argument and the scenario's name in
// MCP_CONFORMANCE_SCENARIO (and, when the suite pins one, the protocol
// version in MCP_CONFORMANCE_PROTOCOL_VERSION). It is built on the public
// client package and does, for each scenario, what an ordinary application
// would: connect, list, call.
//
// Scenarios register themselves in the scenarios map (auth.go and
// skills.go add theirs in init functions); a scenario without an entry
// runs the generic one: list the tools and call each.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// A scenario runs against the scenario server at url.
type scenario func(ctx context.Context, url string) error

// scenarios maps a scenario name to its run.
var scenarios = map[string]scenario{
	"initialize":                          listOnly,
	"tools_call":                          callAllTools,
	"elicitation-sep1034-client-defaults": callAllTools,
	"sse-retry":                           callAllTools,
	"request-metadata":                    callAllTools,
	"sep-2322-client-request-state":       requestState,
	"http-standard-headers":               everything,
	"http-custom-headers":                 callAllTools,
	"http-invalid-tool-headers":           callAllTools,
	"json-schema-ref-no-deref":            listOnly,
	"json-schema-2020-12-preservation":    schemaEcho,
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: client SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)")
		os.Exit(2)
	}
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	run, ok := scenarios[name]
	if !ok {
		run = callAllTools
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "scenario %s: %v\n", name, err)
		os.Exit(1)
	}
}

// options are the client options every scenario uses: the version the
// suite pins, and handlers for every kind of input, so that every
// capability is declared.
func options() *client.Options {
	return &client.Options{
		Version:    os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"),
		ClientInfo: mcp.Implementation{Name: "mcpkit-conformance-client", Version: "1.0.0"},
		Logger:     slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Elicit: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			// Accept; the client fills in the schema's defaults, and a
			// boolean confirmation gets true.
			content := map[string]any{}
			if raw, ok := p.RequestedSchema.(json.RawMessage); ok {
				var s struct {
					Properties map[string]struct {
						Type    string          `json:"type"`
						Default json.RawMessage `json:"default"`
					} `json:"properties"`
				}
				json.Unmarshal(raw, &s)
				for k, v := range s.Properties {
					if v.Type == "boolean" && len(v.Default) == 0 {
						content[k] = true
					}
				}
			}
			return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: content}, nil
		},
		ElicitURL: true,
		Sample: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "conformance", Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, StopReason: "endTurn"}, nil
		},
		Roots: func(ctx context.Context) ([]mcp.Root, error) {
			return []mcp.Root{{URI: "file:///tmp", Name: "tmp"}}, nil
		},
	}
}

func connect(ctx context.Context, url string) (*client.Client, error) {
	return client.Connect(ctx, &client.HTTPTransport{URL: url}, options())
}

// connectTools connects to url and lists the server's tools; on an error
// the client is closed.
func connectTools(ctx context.Context, url string) (*client.Client, []*mcp.Tool, error) {
	c, err := connect(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	ts, err := tools(ctx, c)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, ts, nil
}

func tools(ctx context.Context, c *client.Client) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range c.ListTools(ctx) {
		if err != nil {
			return out, err
		}
		out = append(out, t)
	}
	return out, nil
}

func listOnly(ctx context.Context, url string) error {
	c, _, err := connectTools(ctx, url)
	if err != nil {
		return err
	}
	c.Close()
	return nil
}

// callAllTools lists the tools and calls each, with arguments made up
// from its input schema.
func callAllTools(ctx context.Context, url string) error {
	c, err := connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close()
	return callAll(ctx, c)
}

// callAll lists c's tools and calls each.
func callAll(ctx context.Context, c *client.Client) error {
	ts, err := tools(ctx, c)
	if err != nil {
		return err
	}
	return callEach(ctx, c, ts)
}

func callEach(ctx context.Context, c *client.Client, ts []*mcp.Tool) error {
	var errs []error
	for _, t := range ts {
		_, err := c.CallTool(ctx, t.Name, arguments(t))
		var te *client.ToolError
		if err != nil && !errors.As(err, &te) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// everything lists and uses every primitive: tools, resources, prompts.
func everything(ctx context.Context, url string) error {
	c, ts, err := connectTools(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close()
	errs := []error{callEach(ctx, c, ts)}
	for r, err := range c.ListResources(ctx) {
		if err != nil {
			errs = append(errs, err)
			break
		}
		if _, err := c.ReadResource(ctx, r.URI); err != nil {
			errs = append(errs, err)
		}
	}
	for p, err := range c.ListPrompts(ctx) {
		if err != nil {
			errs = append(errs, err)
			break
		}
		args := map[string]string{}
		for _, a := range p.Arguments {
			args[a.Name] = "test"
		}
		if _, err := c.GetPrompt(ctx, p.Name, args); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// requestState calls the MRTR tools in an order that shows isolation: an
// unrelated call between the input rounds of another.
func requestState(ctx context.Context, url string) error {
	c, ts, err := connectTools(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close()
	order := []string{"test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"}
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := slices.Index(order, ts[i].Name), slices.Index(order, ts[j].Name)
		return a >= 0 && (b < 0 || a < b)
	})
	return callEach(ctx, c, ts)
}

// schemaEcho sends the focal tool's input schema back, verbatim, to the
// echo tool.
func schemaEcho(ctx context.Context, url string) error {
	c, ts, err := connectTools(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close()
	var focal json.RawMessage
	for _, t := range ts {
		if t.Name == "json_schema_2020_12_tool" {
			focal, _ = t.InputSchema.(json.RawMessage)
		}
	}
	if focal == nil {
		return errors.New("no json_schema_2020_12_tool listed")
	}
	_, err = c.CallTool(ctx, "json_schema_echo", map[string]any{"schema": focal})
	return err
}

// sampleStrings are argument values for properties whose names ask for a
// kind of string (the header-encoding scenarios).
var sampleStrings = map[string]string{
	"non_ascii_val":      "café ☕",
	"whitespace_val":     "  padded  ",
	"leading_space_val":  " leading",
	"trailing_space_val": "trailing ",
	"internal_space_val": "a b c",
	"control_char_val":   "a\x01b",
	"crlf_val":           "line1\r\nline2",
	"tab_val":            "\tindented",
	"empty_val":          "",
}

// arguments makes up arguments for a tool from its input schema: a value
// of the right type for every property; a tool named *_null gets null for
// its optional properties.
func arguments(t *mcp.Tool) map[string]any {
	raw, _ := t.InputSchema.(json.RawMessage)
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
			Enum []any  `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(raw, &s)
	args := map[string]any{}
	nullTool := len(t.Name) > 5 && t.Name[len(t.Name)-5:] == "_null"
	for name, p := range s.Properties {
		if nullTool && !slices.Contains(s.Required, name) {
			args[name] = nil
			continue
		}
		if len(p.Enum) > 0 {
			args[name] = p.Enum[0]
			continue
		}
		switch p.Type {
		case "integer":
			args[name] = 42
		case "number":
			args[name] = 3.5
		case "boolean":
			args[name] = true
		case "object":
			args[name] = map[string]any{}
		case "array":
			args[name] = []any{}
		default:
			if v, ok := sampleStrings[name]; ok {
				args[name] = v
			} else {
				args[name] = "test-" + name
			}
		}
	}
	return args
}
