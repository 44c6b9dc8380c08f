package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

func skillsServer(ics ...Interceptor) *Server {
	s := NewServer(&ServerOptions{Interceptors: ics, Logger: discardLogger()})
	s.AddMethod("skills/get", func(ctx context.Context, req *MethodRequest) (any, error) {
		var p struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil || p.Name == "" {
			return nil, InvalidParams("Invalid params: skills/get needs a name")
		}
		switch p.Name {
		case "broken":
			return nil, errors.New("disk on fire")
		case "raw":
			return json.RawMessage(`{"raw":true}`), nil
		}
		return map[string]string{"name": p.Name, "version": req.Info.ProtocolVersion}, nil
	}, &MethodOptions{NameParam: "name", Extension: "io.example/skills", ExtensionSettings: map[string]bool{"directory": true}})
	s.AddMethod("skills/list", func(ctx context.Context, req *MethodRequest) (any, error) {
		return nil, nil
	}, &MethodOptions{Extension: "io.example/skills", DisableLegacy: true})
	return s
}

func TestAddMethod(t *testing.T) {
	s := skillsServer()
	tests := []struct {
		name, method, params string
		result               map[string]any
		code                 int
	}{
		{"result", "skills/get", `{"name":"a"}`, map[string]any{"resultType": "complete", "name": "a", "version": LatestVersion}, 0},
		{"raw", "skills/get", `{"name":"raw"}`, map[string]any{"resultType": "complete", "raw": true}, 0},
		{"nil", "skills/list", `{}`, map[string]any{"resultType": "complete"}, 0},
		{"protocol error", "skills/get", `{}`, nil, jsonrpc.CodeInvalidParams},
		{"other error", "skills/get", `{"name":"broken"}`, nil, jsonrpc.CodeInternalError},
		{"unknown", "skills/nope", `{}`, nil, jsonrpc.CodeMethodNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, s, tt.method, tt.params)
			if tt.code != 0 {
				if r.Error == nil || r.Error.Code != int(tt.code) {
					t.Fatalf("error %+v, want code %d", r.Error, tt.code)
				}
				if tt.code == jsonrpc.CodeInternalError && r.Error.Message != "Internal error" {
					t.Errorf("internal error message %q leaks details", r.Error.Message)
				}
				return
			}
			if r.Error != nil {
				t.Fatalf("error %+v", r.Error)
			}
			delete(r.Result, "_meta")
			if diff := cmp.Diff(tt.result, r.Result); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
	res := mustResult(t, s, "server/discover", "")
	ext := res["capabilities"].(map[string]any)["extensions"]
	if diff := cmp.Diff(map[string]any{"io.example/skills": map[string]any{"directory": true}}, ext); diff != "" {
		t.Errorf("extensions (-want +got):\n%s", diff)
	}
	s.RemoveMethod("skills/get")
	if r := call(t, s, "skills/get", `{"name":"a"}`); r.Error == nil || r.Error.Code != int(jsonrpc.CodeMethodNotFound) {
		t.Errorf("after RemoveMethod: %+v", r.Error)
	}
}

func TestAddMethodHeadersAndInterceptors(t *testing.T) {
	rec := newCallRecorder()
	srv := httptest.NewServer(skillsServer(rec.intercept))
	defer srv.Close()
	resp := httpPost(t, srv.URL, "skills/get", "other", `{"name":"a"}`, "")
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("Mcp-Name mismatch: status %d, want 400", resp.StatusCode)
	}
	resp = httpPost(t, srv.URL, "skills/get", "a", `{"name":"a"}`, "")
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
	want := []seen{
		{Method: "skills/get", Name: "a", ID: "5", Transport: TransportStreamableHTTP, Code: CodeHeaderMismatch, Status: 400},
		{Method: "skills/get", Name: "a", ID: "5", Transport: TransportStreamableHTTP, ResultType: "complete", Status: 200},
	}
	if diff := cmp.Diff(want, rec.all()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestAddMethodLegacy(t *testing.T) {
	s := skillsServer()
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"skills/get","params":{"name":"a"}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"skills/list","params":{}}` + "\n"
	var out strings.Builder
	if err := s.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines: %s", len(lines), out.String())
	}
	byID := map[string]string{} // the answers may come in any order
	for _, l := range lines {
		var m struct{ ID json.RawMessage }
		json.Unmarshal([]byte(l), &m)
		byID[string(m.ID)] = l
	}
	if want := `{"jsonrpc":"2.0","id":2,"result":{"name":"a","version":"2025-11-25"}}`; byID["2"] != want {
		t.Errorf("legacy skills/get:\n got %s\nwant %s", byID["2"], want)
	}
	if !strings.Contains(byID["3"], `"code":-32601`) {
		t.Errorf("DisableLegacy method in a legacy session: %s", byID["3"])
	}
}

func TestAddMethodPanics(t *testing.T) {
	s := NewServer(nil)
	h := func(ctx context.Context, req *MethodRequest) (any, error) { return nil, nil }
	for _, m := range []string{"", "tools/call", "initialize", "server/discover", "logging/setLevel", "notifications/x"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AddMethod(%q) did not panic", m)
				}
			}()
			s.AddMethod(m, h, nil)
		}()
	}
}
