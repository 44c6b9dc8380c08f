package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// TestSealedCursor checks that a sealed cursor opens only for the method
// and caller it was sealed for, on a replica with the same keys.
func TestSealedCursor(t *testing.T) {
	keys := [][]byte{[]byte("0123456789abcdef0123456789abcdef")}
	newServer := func(k [][]byte) *Server {
		s := NewServer(&ServerOptions{Logger: discardLogger(), State: StateOptions{Keys: k}})
		for _, m := range []string{"x.test/a", "x.test/b"} {
			s.AddMethod(m, func(ctx context.Context, req *MethodRequest) (any, error) {
				var p struct {
					Cursor string `json:"cursor"`
				}
				json.Unmarshal(req.Params, &p)
				if p.Cursor == "" {
					c, err := req.SealCursor([]byte("position 7"))
					return map[string]string{"cursor": c}, err
				}
				data, err := req.OpenCursor(p.Cursor)
				return map[string]string{"data": string(data)}, err
			}, nil)
		}
		return s
	}
	do := func(s *Server, method, cursor string, p *Principal) (result map[string]string, code int) {
		params, _ := json.Marshal(map[string]string{"cursor": cursor})
		msg := decodeMsg(t, mcpwire.Request{ID: "1", Method: method, Params: string(params)}.Bytes())
		out, _ := s.Handle(context.Background(), nil, &Incoming{Message: &msg, Principal: p}, nil)
		var resp struct {
			Result map[string]string   `json:"result"`
			Error  *struct{ Code int } `json:"error"`
		}
		json.Unmarshal(out, &resp)
		if resp.Error != nil {
			return nil, resp.Error.Code
		}
		return resp.Result, 0
	}
	a, b := newServer(keys), newServer(keys)
	ann, bob := &Principal{Subject: "ann"}, &Principal{Subject: "bob"}
	first, _ := do(a, "x.test/a", "", ann)
	c := first["cursor"]
	if got, code := do(b, "x.test/a", c, ann); code != 0 || got["data"] != "position 7" {
		t.Errorf("the other replica: %v, code %d; want the data", got, code)
	}
	for _, tc := range []struct {
		name   string
		s      *Server
		method string
		cursor string
		p      *Principal
	}{
		{"another method", a, "x.test/b", c, ann},
		{"another caller", a, "x.test/a", c, bob},
		{"no caller", a, "x.test/a", c, nil},
		{"another key", newServer([][]byte{[]byte("fedcba9876543210fedcba9876543210")}), "x.test/a", c, ann},
		{"tampered", a, "x.test/a", c[:len(c)-2] + "AA", ann},
	} {
		if got, code := do(tc.s, tc.method, tc.cursor, tc.p); code != -32602 {
			t.Errorf("%s: %v, code %d; want -32602", tc.name, got, code)
		}
	}
}
