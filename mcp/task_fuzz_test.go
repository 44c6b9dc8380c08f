package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// FuzzTaskMethods sends arbitrary params to tasks/get, tasks/update and
// tasks/cancel, against a task waiting for input and one that runs: every
// response is one JSON-RPC response with a result (resultType complete) or
// an error, never a panic.
func FuzzTaskMethods(f *testing.F) {
	f.Add(uint8(0), `{"taskId":"wait"}`)
	f.Add(uint8(1), `{"taskId":"wait","inputResponses":{"ok":{"action":"accept","content":{"ok":true}}}}`)
	f.Add(uint8(1), `{"taskId":"wait","inputResponses":{"ok":{"action":"accept","content":{"ok":"x"}},"zz":[]}}`)
	f.Add(uint8(1), `{"taskId":"wait","inputResponses":{"\u006fk":{"action":"decline"}}}`)
	f.Add(uint8(1), `{"taskId":"wait","inputResponses":null}`)
	f.Add(uint8(2), `{"taskId":"run"}`)
	f.Add(uint8(0), `{"taskId":17}`)
	f.Add(uint8(2), `{}`)
	s := NewServer(&ServerOptions{Tasks: TaskOptions{MaxRunning: 4}})
	AddTool(s, &Tool{Name: "confirm", Description: "d", TaskSupport: TaskOptional}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		req.StartTask()
		if _, err := askOK(req, "ok"); err != nil {
			return "", err
		}
		return "done", nil
	})
	f.Cleanup(func() { s.Shutdown(context.Background()) })
	now := time.Now()
	st := s.tasks.store
	for _, rec := range []*TaskRecord{
		{ID: "wait", Tool: "confirm", Status: TaskInputRequired, CreatedAt: now, UpdatedAt: now, TTL: time.Hour,
			InputRequests: map[string]json.RawMessage{"ok": json.RawMessage(`{"method":"elicitation/create","params":{}}`)},
			Params:        json.RawMessage(`{"name":"confirm","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}`)},
		{ID: "run", Tool: "confirm", Status: TaskWorking, CreatedAt: now, UpdatedAt: now, TTL: time.Hour, Runner: "elsewhere", LeaseUntil: now.Add(time.Hour)},
	} {
		if err := st.Create(context.Background(), rec); err != nil {
			f.Fatal(err)
		}
	}
	methods := []string{"tasks/get", "tasks/update", "tasks/cancel"}
	f.Fuzz(func(t *testing.T, m uint8, params string) {
		if !json.Valid([]byte(params)) {
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(params), &obj) != nil || obj == nil {
			return
		}
		if obj["taskId"] != nil && string(obj["taskId"]) == `"run"` && m%3 == 2 {
			return // keep the running task for other inputs
		}
		r := taskCall(t, context.Background(), s, nil, extCaps, methods[int(m)%3], params)
		if (r.Error == nil) == (r.Result == nil) {
			t.Fatalf("response with neither or both of result and error: %+v", r)
		}
		if r.Result != nil && r.Result["resultType"] != "complete" {
			t.Fatalf("resultType %v", r.Result["resultType"])
		}
	})
}
