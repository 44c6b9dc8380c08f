package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// exampleRPC posts one 2026-07-28 request to h in-process, the way a
// Streamable HTTP client does, and returns what came back, one JSON
// message per line with object keys sorted. The serverInfo that every
// result carries in _meta is left out for brevity. extraMeta are more
// _meta members, such as `"progressToken":1`.
func exampleRPC(h http.Handler, method, params, extraMeta string) string {
	var p map[string]any
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		panic(err)
	}
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.LatestVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	if extraMeta != "" {
		if err := json.Unmarshal([]byte("{"+extraMeta+"}"), &meta); err != nil {
			panic(err)
		}
	}
	p["_meta"] = meta
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": p})
	req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcp.LatestVersion)
	req.Header.Set("Mcp-Method", method)
	for _, k := range []string{"name", "uri"} {
		if v, ok := p[k].(string); ok && method != "completion/complete" {
			req.Header.Set("Mcp-Name", v)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var msgs []string
	if w.Header().Get("Content-Type") == "text/event-stream" {
		for _, line := range strings.Split(w.Body.String(), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				msgs = append(msgs, d)
			}
		}
	} else {
		msgs = []string{w.Body.String()}
	}
	var out []string
	for _, m := range msgs {
		d := json.NewDecoder(strings.NewReader(m))
		d.UseNumber()
		var v map[string]any
		if err := d.Decode(&v); err != nil {
			panic(err)
		}
		if r, ok := v["result"].(map[string]any); ok {
			if meta, ok := r["_meta"].(map[string]any); ok {
				delete(meta, "io.modelcontextprotocol/serverInfo")
				if len(meta) == 0 {
					delete(r, "_meta")
				}
			}
		}
		delete(v, "jsonrpc")
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	return strings.Join(out, "\n")
}

func ExampleServerOptions() {
	s := mcp.NewServer(&mcp.ServerOptions{
		Info:         mcp.Implementation{Name: "weather", Version: "1.2.0"},
		Instructions: "Ask for forecasts by city.",
		Cache:        mcp.CacheOptions{TTL: 5 * time.Minute},
	})
	fmt.Println(exampleRPC(s, "server/discover", `{}`, ""))
	// Output:
	// {"id":1,"result":{"cacheScope":"public","capabilities":{},"instructions":"Ask for forecasts by city.","resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"ttlMs":300000}}
}

// A setting that can be off takes mcp.Off, and a feature is turned off by
// its group's Disable field. Here the discover result is stale at once, idle
// streams get no keep-alive comments, and only the modern revision is
// served.
func ExampleServerOptions_off() {
	s := mcp.NewServer(&mcp.ServerOptions{
		Cache:  mcp.CacheOptions{TTL: mcp.Off},
		HTTP:   mcp.HTTPOptions{KeepAlive: mcp.Off},
		Legacy: mcp.LegacyOptions{Disable: true},
	})
	fmt.Println(exampleRPC(s, "server/discover", `{}`, ""))
	// Output:
	// {"id":1,"result":{"cacheScope":"public","capabilities":{},"resultType":"complete","supportedVersions":["2026-07-28"],"ttlMs":0}}
}

// ForecastIn and ForecastOut are the arguments and result of a typed tool:
// their JSON Schemas are inferred from the Go types.
type ForecastIn struct {
	City string `json:"city" jsonschema:"the city to forecast"`
	Days int    `json:"days,omitempty" jsonschema:"how many days ahead (default 1)"`
}

type ForecastOut struct {
	City    string `json:"city"`
	Summary string `json:"summary"`
}

func ExampleAddTool() {
	s := mcp.NewServer(nil)
	mcp.AddTool(s, &mcp.Tool{Name: "forecast", Description: "Forecasts the weather in a city."},
		func(ctx context.Context, req *mcp.ToolRequest, in ForecastIn) (ForecastOut, error) {
			if in.City == "Atlantis" {
				return ForecastOut{}, errors.New("no forecasts under the sea")
			}
			return ForecastOut{City: in.City, Summary: "sunny"}, nil
		})
	fmt.Println(exampleRPC(s, "tools/call", `{"name":"forecast","arguments":{"city":"Lyon"}}`, ""))
	// Invalid arguments and handler errors are tool results the model can
	// read, with isError set.
	fmt.Println(exampleRPC(s, "tools/call", `{"name":"forecast","arguments":{"days":2}}`, ""))
	fmt.Println(exampleRPC(s, "tools/call", `{"name":"forecast","arguments":{"city":"Atlantis"}}`, ""))
	// Output:
	// {"id":1,"result":{"content":[{"text":"{\"city\":\"Lyon\",\"summary\":\"sunny\"}","type":"text"}],"resultType":"complete","structuredContent":{"city":"Lyon","summary":"sunny"}}}
	// {"id":1,"result":{"content":[{"text":"Invalid arguments for tool forecast: required: missing properties: [\"city\"]","type":"text"}],"isError":true,"resultType":"complete"}}
	// {"id":1,"result":{"content":[{"text":"no forecasts under the sea","type":"text"}],"isError":true,"resultType":"complete"}}
}

func ExampleServer_AddRawTool() {
	s := mcp.NewServer(nil)
	s.AddRawTool(&mcp.Tool{
		Name:        "sum",
		Description: "Adds numbers.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"xs":{"type":"array","items":{"type":"number"}}},"required":["xs"]}`),
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Xs []float64 }
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return nil, err
		}
		total := 0.0
		for _, x := range in.Xs {
			total += x
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(total)}}}, nil
	})
	fmt.Println(exampleRPC(s, "tools/call", `{"name":"sum","arguments":{"xs":[1,2,3.5]}}`, ""))
	// Output:
	// {"id":1,"result":{"content":[{"text":"6.5","type":"text"}],"resultType":"complete"}}
}

func ExampleServer_RemoveTools() {
	s := mcp.NewServer(nil)
	for _, name := range []string{"a", "b"} {
		s.AddRawTool(&mcp.Tool{Name: name, Description: "A tool.", InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	}
	s.RemoveTools("a")
	fmt.Println(exampleRPC(s, "tools/list", `{}`, ""))
	// Output:
	// {"id":1,"result":{"cacheScope":"public","resultType":"complete","tools":[{"description":"A tool.","inputSchema":{"type":"object"},"name":"b"}],"ttlMs":3600000}}
}

func ExampleServer_AddResource() {
	s := mcp.NewServer(nil)
	s.AddResource(&mcp.Resource{URI: "file:///motd.txt", Name: "motd", MIMEType: "text/plain", CacheTTL: time.Minute},
		func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "Hello!"}}}, nil
		})
	fmt.Println(exampleRPC(s, "resources/list", `{}`, ""))
	fmt.Println(exampleRPC(s, "resources/read", `{"uri":"file:///motd.txt"}`, ""))
	fmt.Println(exampleRPC(s, "resources/read", `{"uri":"file:///nope.txt"}`, ""))
	// Output:
	// {"id":1,"result":{"cacheScope":"public","resources":[{"mimeType":"text/plain","name":"motd","uri":"file:///motd.txt"}],"resultType":"complete","ttlMs":3600000}}
	// {"id":1,"result":{"cacheScope":"public","contents":[{"mimeType":"text/plain","text":"Hello!","uri":"file:///motd.txt"}],"resultType":"complete","ttlMs":60000}}
	// {"error":{"code":-32602,"data":{"uri":"file:///nope.txt"},"message":"Resource not found: file:///nope.txt"},"id":1}
}

func ExampleServer_AddResourceTemplate() {
	s := mcp.NewServer(nil)
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: "users://{id}/avatar",
		Name:        "avatar",
		MIMEType:    "image/png",
		CacheScope:  mcp.CachePrivate,
	}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		if req.Params["id"] != "42" {
			return nil, mcp.ResourceNotFound(req.URI)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Blob: []byte{0x89, 'P', 'N', 'G'}}}}, nil
	})
	fmt.Println(exampleRPC(s, "resources/templates/list", `{}`, ""))
	fmt.Println(exampleRPC(s, "resources/read", `{"uri":"users://42/avatar"}`, ""))
	// Output:
	// {"id":1,"result":{"cacheScope":"public","resourceTemplates":[{"mimeType":"image/png","name":"avatar","uriTemplate":"users://{id}/avatar"}],"resultType":"complete","ttlMs":3600000}}
	// {"id":1,"result":{"cacheScope":"private","contents":[{"blob":"iVBORw==","mimeType":"image/png","uri":"users://42/avatar"}],"resultType":"complete","ttlMs":3600000}}
}

func ExampleServer_RemoveResources() {
	s := mcp.NewServer(nil)
	h := func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: req.URI}}}, nil
	}
	s.AddResource(&mcp.Resource{URI: "a://x", Name: "x"}, h)
	s.AddResource(&mcp.Resource{URI: "a://y", Name: "y"}, h)
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "a://items/{id}", Name: "item"}, h)
	// Static resources go by URI, templates by URI template.
	s.RemoveResources("a://x", "a://items/{id}")
	fmt.Println(exampleRPC(s, "resources/read", `{"uri":"a://items/1"}`, ""))
	fmt.Println(exampleRPC(s, "resources/list", `{}`, ""))
	// Output:
	// {"error":{"code":-32602,"data":{"uri":"a://items/1"},"message":"Resource not found: a://items/1"},"id":1}
	// {"id":1,"result":{"cacheScope":"public","resources":[{"name":"y","uri":"a://y"}],"resultType":"complete","ttlMs":3600000}}
}

func ExampleResourceNotFound() {
	err := mcp.ResourceNotFound("file:///missing.txt")
	data, _ := json.Marshal(err.Data)
	fmt.Println(err.Code, err.Message, string(data), err.HTTPStatus())
	// Output:
	// -32602 Resource not found: file:///missing.txt {"uri":"file:///missing.txt"} 400
}

func ExampleServer_AddPrompt() {
	s := mcp.NewServer(nil)
	s.AddPrompt(&mcp.Prompt{
		Name:        "translate",
		Description: "Asks for a translation.",
		Arguments: []mcp.PromptArgument{
			{Name: "text", Required: true},
			{Name: "language", Description: "Target language (default French)"},
		},
	}, func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
		lang := req.Arguments["language"]
		if lang == "" {
			lang = "French"
		}
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
			{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Translate into " + lang + ": " + req.Arguments["text"]}},
		}}, nil
	})
	fmt.Println(exampleRPC(s, "prompts/get", `{"name":"translate","arguments":{"text":"good morning"}}`, ""))
	fmt.Println(exampleRPC(s, "prompts/get", `{"name":"translate","arguments":{}}`, ""))
	// Output:
	// {"id":1,"result":{"messages":[{"content":{"text":"Translate into French: good morning","type":"text"},"role":"user"}],"resultType":"complete"}}
	// {"error":{"code":-32602,"message":"Invalid params: prompt translate needs argument(s) text"},"id":1}
}

func ExampleServer_RemovePrompts() {
	s := mcp.NewServer(nil)
	h := func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) { return nil, nil }
	s.AddPrompt(&mcp.Prompt{Name: "old", Description: "Retired."}, h)
	s.AddPrompt(&mcp.Prompt{Name: "new", Description: "Current."}, h)
	s.RemovePrompts("old")
	fmt.Println(exampleRPC(s, "prompts/list", `{}`, ""))
	// Output:
	// {"id":1,"result":{"cacheScope":"public","prompts":[{"description":"Current.","name":"new"}],"resultType":"complete","ttlMs":3600000}}
}

func ExampleCompleteFrom() {
	s := mcp.NewServer(nil)
	s.AddPrompt(&mcp.Prompt{
		Name:        "review",
		Description: "Asks for a code review.",
		Arguments:   []mcp.PromptArgument{{Name: "language"}},
		Complete:    mcp.CompleteFrom(map[string][]string{"language": {"Go", "Python", "Perl"}}),
	}, func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) { return nil, nil })
	fmt.Println(exampleRPC(s, "completion/complete", `{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"language","value":"p"}}`, ""))
	// Output:
	// {"id":1,"result":{"completion":{"values":["Python","Perl"]},"resultType":"complete"}}
}

func ExampleListFilters() {
	// Only callers presenting the admin key see (and may call) admin_*
	// tools; lists become per-request and private.
	s := mcp.NewServer(&mcp.ServerOptions{ListFilters: mcp.ListFilters{
		Tools: func(ctx context.Context, info *mcp.RequestInfo, t *mcp.Tool) bool {
			return !strings.HasPrefix(t.Name, "admin_") || info.Header.Get("X-Api-Key") == "admin-key"
		},
	}})
	for _, name := range []string{"admin_reset", "status"} {
		s.AddRawTool(&mcp.Tool{Name: name, Description: "Tool " + name + ".", InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	}
	fmt.Println(exampleRPC(s, "tools/list", `{}`, ""))
	fmt.Println(exampleRPC(s, "tools/call", `{"name":"admin_reset"}`, ""))
	// Output:
	// {"id":1,"result":{"cacheScope":"private","resultType":"complete","tools":[{"description":"Tool status.","inputSchema":{"type":"object"},"name":"status"}],"ttlMs":3600000}}
	// {"error":{"code":-32602,"message":"Unknown tool: admin_reset"},"id":1}
}

func ExampleToolRequest_Progress() {
	s := mcp.NewServer(nil)
	mcp.AddTool(s, &mcp.Tool{Name: "index", Description: "Indexes documents."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			for i := 1; i <= 2; i++ {
				req.Progress(float64(i), 2, "") // sent only when the request has a progress token
			}
			return "indexed", nil
		})
	// With a progress token, the response becomes an SSE stream: progress
	// notifications, then the result.
	fmt.Println(exampleRPC(s, "tools/call", `{"name":"index"}`, `"progressToken":"p1"`))
	// Output:
	// {"method":"notifications/progress","params":{"progress":1,"progressToken":"p1","total":2}}
	// {"method":"notifications/progress","params":{"progress":2,"progressToken":"p1","total":2}}
	// {"id":1,"result":{"content":[{"text":"indexed","type":"text"}],"resultType":"complete"}}
}

func ExampleToolRequest_Log() {
	s := mcp.NewServer(nil)
	mcp.AddTool(s, &mcp.Tool{Name: "deploy", Description: "Deploys."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.Log(mcp.LevelDebug, "deploy", "resolving targets")
			req.Log(mcp.LevelWarning, "deploy", map[string]any{"skipped": 1})
			return "deployed", nil
		})
	// Logs are sent only when the request asks for them, at or above the
	// level it names.
	fmt.Println(exampleRPC(s, "tools/call", `{"name":"deploy"}`, `"io.modelcontextprotocol/logLevel":"info"`))
	fmt.Println(exampleRPC(s, "tools/call", `{"name":"deploy"}`, ""))
	// Output:
	// {"method":"notifications/message","params":{"data":{"skipped":1},"level":"warning","logger":"deploy"}}
	// {"id":1,"result":{"content":[{"text":"deployed","type":"text"}],"resultType":"complete"}}
	// {"id":1,"result":{"content":[{"text":"deployed","type":"text"}],"resultType":"complete"}}
}

func ExamplePromptRequest_Log() {
	s := mcp.NewServer(nil)
	s.AddPrompt(&mcp.Prompt{Name: "brief", Description: "Summarizes the day."},
		func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
			req.Log(mcp.LevelInfo, "", "loading calendar")
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Summarize my day."}}}}, nil
		})
	fmt.Println(exampleRPC(s, "prompts/get", `{"name":"brief"}`, `"io.modelcontextprotocol/logLevel":"debug"`))
	// Output:
	// {"method":"notifications/message","params":{"data":"loading calendar","level":"info"}}
	// {"id":1,"result":{"messages":[{"content":{"text":"Summarize my day.","type":"text"},"role":"user"}],"resultType":"complete"}}
}

func ExampleResourceRequest_Progress() {
	s := mcp.NewServer(nil)
	s.AddResource(&mcp.Resource{URI: "db://report", Name: "report"},
		func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
			req.Progress(50, 100, "half way")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "all good"}}}, nil
		})
	fmt.Println(exampleRPC(s, "resources/read", `{"uri":"db://report"}`, `"progressToken":3`))
	// Output:
	// {"method":"notifications/progress","params":{"message":"half way","progress":50,"progressToken":3,"total":100}}
	// {"id":1,"result":{"cacheScope":"public","contents":[{"text":"all good","uri":"db://report"}],"resultType":"complete","ttlMs":3600000}}
}

func ExampleCompleteRequest_Log() {
	s := mcp.NewServer(nil)
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: "repo://{name}", Name: "repo",
		Complete: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			req.Log(mcp.LevelDebug, "complete", "searching "+req.URITemplate+" for "+req.Argument+"="+req.Value)
			return &mcp.CompleteResult{Values: []string{"mcpkit"}}, nil
		},
	}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil })
	fmt.Println(exampleRPC(s, "completion/complete", `{"ref":{"type":"ref/resource","uri":"repo://{name}"},"argument":{"name":"name","value":"mc"}}`, `"io.modelcontextprotocol/logLevel":"debug"`))
	// Output:
	// {"method":"notifications/message","params":{"data":"searching repo://{name} for name=mc","level":"debug","logger":"complete"}}
	// {"id":1,"result":{"completion":{"values":["mcpkit"]},"resultType":"complete"}}
}

// printer is a Notifier that prints notifications.
type printer struct{}

func (printer) Notify(msg []byte) { fmt.Printf("notification: %s\n", msg) }

func ExampleServer_Handle() {
	s := mcp.NewServer(nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ping", Description: "Answers pong."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.Progress(1, 1, "")
			return "pong", nil
		})
	// A transport decodes a message and hands it to Handle; stdio passes no
	// headers.
	body := []byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"ping","_meta":{"progressToken":9,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	msg, derr := jsonrpc.Decode(body)
	if derr != nil {
		panic(derr)
	}
	resp, status := s.Handle(context.Background(), nil, &mcp.Incoming{Message: &msg}, printer{})
	fmt.Println(status)
	fmt.Println(strings.Replace(string(resp), `"io.modelcontextprotocol/serverInfo":{"name":"mcpkit","version":"0.0.0"}`, "…", 1))
	// Output:
	// notification: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":9,"progress":1,"total":1}}
	// 200
	// {"jsonrpc":"2.0","id":"x","result":{"resultType":"complete","content":[{"type":"text","text":"pong"}],"_meta":{…}}}
}

func ExampleServer_ServeHTTP() {
	s := mcp.NewServer(nil)
	srv := httptest.NewServer(s) // a Server is an http.Handler
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var body struct{ Error struct{ Code int } }
	json.NewDecoder(resp.Body).Decode(&body)
	// No tools are registered, so tools/list does not exist here.
	fmt.Println(resp.StatusCode, body.Error.Code)
	// Output:
	// 404 -32601
}

func ExampleServer_NewHTTPServer() {
	s := mcp.NewServer(nil)
	hs := s.NewHTTPServer("127.0.0.1:0", "/mcp")
	// In a program: log.Fatal(hs.ListenAndServe()). Here, serve it in-process.
	srv := httptest.NewServer(hs.Handler)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/mcp")
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Allow"), hs.MaxHeaderBytes)
	// Output:
	// 405 POST 262144
}

func ExampleInvalidParams() {
	s := mcp.NewServer(nil)
	mcp.AddTool(s, &mcp.Tool{Name: "strict", Description: "Refuses at the protocol level."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			// A *mcp.Error fails the request itself instead of becoming an
			// isError tool result.
			return "", mcp.InvalidParams("Invalid params: strict is closed today")
		})
	fmt.Println(exampleRPC(s, "tools/call", `{"name":"strict"}`, ""))
	// Output:
	// {"error":{"code":-32602,"message":"Invalid params: strict is closed today"},"id":1}
}

func ExampleMissingCapability() {
	s := mcp.NewServer(nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Needs elicitation."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			if req.Info.ClientCapabilities.Elicitation == nil {
				return "", mcp.MissingCapability(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}})
			}
			return "ok", nil
		})
	fmt.Println(exampleRPC(s, "tools/call", `{"name":"ask"}`, ""))
	// Output:
	// {"error":{"code":-32021,"data":{"requiredCapabilities":{"elicitation":{}}},"message":"Missing required client capability: elicitation (declare it in the request's clientCapabilities)"},"id":1}
}

func ExampleError_HTTPStatus() {
	for _, e := range []*mcp.Error{
		mcp.InvalidParams("bad"),
		{Code: jsonrpc.CodeMethodNotFound, Message: "no"},
		{Code: jsonrpc.CodeInternalError, Message: "oops"},
		{Code: -32001, Message: "application-defined"},
	} {
		fmt.Println(e.Code, e.HTTPStatus())
	}
	// Output:
	// -32602 400
	// -32601 404
	// -32603 500
	// -32001 200
}

func ExampleClientCapabilities_HasExtension() {
	s := mcp.NewServer(nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ui", Description: "Says whether the client renders apps."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return fmt.Sprint(req.Info.ClientCapabilities.HasExtension("io.modelcontextprotocol/ui")), nil
		})
	for _, caps := range []string{`{}`, `{"extensions":{"io.modelcontextprotocol/ui":{}}}`} {
		out := exampleRPC(s, "tools/call", `{"name":"ui"}`, `"io.modelcontextprotocol/clientCapabilities":`+caps)
		fmt.Println(out)
	}
	// Output:
	// {"id":1,"result":{"content":[{"text":"false","type":"text"}],"resultType":"complete"}}
	// {"id":1,"result":{"content":[{"text":"true","type":"text"}],"resultType":"complete"}}
}

func ExampleCallToolResult() {
	s := mcp.NewServer(nil)
	mcp.AddTool(s, &mcp.Tool{Name: "report", Description: "Returns several kinds of content."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (*mcp.CallToolResult, error) {
			size := int64(2048)
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "Report ready.", Annotations: &mcp.Annotations{Audience: []mcp.Role{mcp.RoleUser}}},
				&mcp.ResourceLink{URI: "file:///report.pdf", Name: "report.pdf", MIMEType: "application/pdf", Size: &size},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///summary.txt", MIMEType: "text/plain", Text: "All green."}},
			}}, nil
		})
	fmt.Println(exampleRPC(s, "tools/call", `{"name":"report"}`, ""))
	// Output:
	// {"id":1,"result":{"content":[{"annotations":{"audience":["user"]},"text":"Report ready.","type":"text"},{"mimeType":"application/pdf","name":"report.pdf","size":2048,"type":"resource_link","uri":"file:///report.pdf"},{"resource":{"mimeType":"text/plain","text":"All green.","uri":"file:///summary.txt"},"type":"resource"}],"resultType":"complete"}}
}
