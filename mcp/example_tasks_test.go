package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// tasksCaps declares the tasks extension (and elicitation).
const tasksCaps = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// A slow tool becomes a task for clients that support tasks: its handler
// does not change. The client gets a task handle at once and polls
// tasks/get until the task is finished; the result is inlined.
func ExampleTaskSupport() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "reports", Version: "1.0.0"}})
	type In struct {
		Month string `json:"month"`
	}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "build_report",
		Description: "Builds the monthly report (takes a while).",
		TaskSupport: mcp.TaskOptional,
	}, func(ctx context.Context, req *mcp.ToolRequest, in In) (string, error) {
		select {
		case <-time.After(300 * time.Millisecond): // the slow part
		case <-ctx.Done(): // tasks/cancel, or Server.Shutdown
			return "", ctx.Err()
		}
		return "Report for " + in.Month + ": all green.", nil
	})
	defer s.Shutdown(context.Background())

	created := tasksPost(s, "tools/call", `{"name":"build_report","arguments":{"month":"July"}}`, tasksCaps)
	fmt.Println(created["resultType"], created["status"])
	id := created["taskId"].(string)
	task := awaitTask(s, id)
	fmt.Println(task["status"], task["result"].(map[string]any)["content"])

	// A client without the extension gets the result directly.
	direct := tasksPost(s, "tools/call", `{"name":"build_report","arguments":{"month":"August"}}`, `{}`)
	fmt.Println(direct["resultType"], direct["content"])
	// Output:
	// task working
	// completed [map[text:Report for July: all green. type:text]]
	// complete [map[text:Report for August: all green. type:text]]
}

// A task that needs the user's confirmation halfway: StartTask hands the
// client its task at once, and the Elicit that follows parks the task in
// input_required. The client answers with tasks/update, and the handler
// runs again from the top with the answer, as in any multi round-trip
// request.
func ExampleToolRequest_StartTask() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "files", Version: "1.0.0"}})
	type In struct {
		Path string `json:"path"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "shred", Description: "Shreds a file after the user confirms.", TaskSupport: mcp.TaskOptional},
		func(ctx context.Context, req *mcp.ToolRequest, in In) (string, error) {
			req.StartTask()
			r, err := req.Elicit("confirm", &mcp.ElicitParams{
				Message:         "Shred " + in.Path + "?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"sure":{"type":"boolean"}},"required":["sure"]}`),
			})
			if err != nil {
				return "", err // the task waits for tasks/update
			}
			var v struct{ Sure bool }
			if !r.Accepted() || r.Decode(&v) != nil || !v.Sure {
				return "Kept " + in.Path + ".", nil
			}
			return "Shredded " + in.Path + ".", nil
		})
	defer s.Shutdown(context.Background())

	id := tasksPost(s, "tools/call", `{"name":"shred","arguments":{"path":"secrets.txt"}}`, tasksCaps)["taskId"].(string)
	task := awaitTask(s, id)
	reqs, _ := json.Marshal(task["inputRequests"])
	fmt.Println(task["status"], string(reqs))

	ack := tasksPost(s, "tasks/update", `{"taskId":"`+id+`","inputResponses":{"confirm":{"action":"accept","content":{"sure":true}}}}`, tasksCaps)
	fmt.Println(ack["resultType"])
	task = awaitTask(s, id)
	fmt.Println(task["status"], task["result"].(map[string]any)["content"])
	// Output:
	// input_required {"confirm":{"method":"elicitation/create","params":{"message":"Shred secrets.txt?","mode":"form","requestedSchema":{"properties":{"sure":{"type":"boolean"}},"required":["sure"],"type":"object"}}}}
	// complete
	// completed [map[text:Shredded secrets.txt. type:text]]
}

// Replicas of one server share their tasks through a common store: a task
// started on one replica is polled on another. In production the store is
// the Redis one of the module github.com/mcpkit/mcpkit/redis; here two
// Servers in one process share a MemoryTaskStore.
func ExampleNewMemoryTaskStore() {
	store := mcp.NewMemoryTaskStore(1000)
	replica := func() *mcp.Server {
		s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "jobs", Version: "1.0.0"}, Tasks: mcp.TaskOptions{Store: store}})
		mcp.AddTool(s, &mcp.Tool{Name: "job", Description: "Runs a job; always a task.", TaskSupport: mcp.TaskRequired},
			func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "job done", nil })
		return s
	}
	a, b := replica(), replica()
	id := tasksPost(a, "tools/call", `{"name":"job","arguments":{}}`, tasksCaps)["taskId"].(string)
	task := awaitTask(b, id)
	fmt.Println(task["status"], task["result"].(map[string]any)["content"])
	// Output:
	// completed [map[text:job done type:text]]
}

// Shutdown stops the tasks a server runs: their handlers' contexts are
// cancelled and the tasks end failed, so that clients polling them (on
// another replica) learn that the work stopped.
func ExampleServer_Shutdown_tasks() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "jobs", Version: "1.0.0"}})
	mcp.AddTool(s, &mcp.Tool{Name: "forever", Description: "Runs until stopped.", TaskSupport: mcp.TaskRequired},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		})
	id := tasksPost(s, "tools/call", `{"name":"forever","arguments":{}}`, tasksCaps)["taskId"].(string)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		fmt.Println("shutdown:", err)
	}
	task := tasksPost(s, "tasks/get", `{"taskId":"`+id+`"}`, tasksCaps)
	fmt.Println(task["status"], task["statusMessage"])
	// Output:
	// failed Server shut down before the task finished
}

// tasksPost sends method with params (a JSON object without _meta) to s
// over Streamable HTTP, declaring the client capabilities caps, and returns
// the result object (or the error object).
func tasksPost(s *mcp.Server, method, params, caps string) map[string]any {
	var p struct{ Name, TaskID string }
	json.Unmarshal([]byte(params), &p)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	params = strings.TrimSpace(params)
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params[:len(params)-1] + "," + meta + "}}"
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", method)
	if name := p.Name + p.TaskID; name != "" {
		r.Header.Set("Mcp-Name", name)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	var resp struct {
		Result map[string]any
		Error  map[string]any
	}
	json.Unmarshal(w.Body.Bytes(), &resp)
	if resp.Error != nil {
		return resp.Error
	}
	return resp.Result
}

// awaitTask polls tasks/get until the task is no longer working, as a
// client does (at the task's pollIntervalMs; faster here), and gives up
// after 10 s, returning the task as it is, so that the example's output
// check fails instead of hanging. It is real time on purpose: polling is
// what the examples show, and an Example cannot run in a synctest bubble
// (the tests of package mcp wait in bubbles instead).
func awaitTask(s *mcp.Server, id string) map[string]any {
	deadline := time.Now().Add(10 * time.Second)
	for {
		task := tasksPost(s, "tasks/get", `{"taskId":"`+id+`"}`, tasksCaps)
		if task["status"] != "working" || time.Now().After(deadline) {
			return task
		}
		time.Sleep(10 * time.Millisecond)
	}
}
