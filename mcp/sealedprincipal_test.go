package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// sealedReplica is a protected server with the state keys key, on a
// loopback listener, with a method test/seal that answers who called and
// the caller sealed for another replica.
func sealedReplica(t *testing.T, key byte) (*mcp.Server, string) {
	t.Helper()
	s := mcp.NewServer(&mcp.ServerOptions{Auth: testAuthOptions("on"), Logger: slog.New(slog.DiscardHandler),
		State: mcp.StateOptions{Keys: [][]byte{bytes.Repeat([]byte{key}, 32)}}})
	s.AddMethod("test/seal", func(ctx context.Context, req *mcp.MethodRequest) (any, error) {
		sealed, err := req.SealPrincipal()
		if err != nil {
			return nil, err
		}
		return map[string]any{"sealed": sealed, "who": req.Info.Principal.Subject, "scopes": req.Info.Principal.Scopes,
			"headerVisible": req.Info.Header.Get(mcp.HeaderSealedPrincipal) != ""}, nil
	}, nil)
	ts := httptest.NewServer(s.NewHTTPServer("", "/mcp").Handler)
	t.Cleanup(ts.Close)
	return s, ts.URL
}

type sealAnswer struct {
	Result struct {
		Sealed        string   `json:"sealed"`
		Who           string   `json:"who"`
		Scopes        []string `json:"scopes"`
		HeaderVisible bool     `json:"headerVisible"`
	} `json:"result"`
}

// TestSealedPrincipal checks that a caller sealed by one replica
// (MethodRequest.SealPrincipal) authenticates the same request on another
// replica with the same state keys, and nothing else: not another
// request, not with other keys, not once expired, not tampered with.
func TestSealedPrincipal(t *testing.T) {
	_, a := sealedReplica(t, 1)
	b, bURL := sealedReplica(t, 1)
	_, other := sealedReplica(t, 2)

	first := rpc{method: "test/seal", token: aliceToken, params: `"x":1`}.do(t, a)
	var got sealAnswer
	if err := json.Unmarshal([]byte(first.body), &got); err != nil || first.status != 200 || got.Result.Sealed == "" {
		t.Fatalf("sealing on replica a: %d %s", first.status, first.body)
	}
	sealed := got.Result.Sealed
	hdr := http.Header{mcp.HeaderSealedPrincipal: {sealed}}

	ok := rpc{method: "test/seal", params: `"x":1`, header: hdr}.do(t, bURL)
	got = sealAnswer{}
	json.Unmarshal([]byte(ok.body), &got)
	if ok.status != 200 || got.Result.Who != "alice" || strings.Join(got.Result.Scopes, " ") != "mcp" || got.Result.HeaderVisible {
		t.Errorf("the same request on replica b: %d %s; want alice with scope mcp, the header hidden", ok.status, ok.body)
	}

	for _, c := range []struct {
		name   string
		url    string
		params string
		sealed string
	}{
		{"other params", bURL, `"x":2`, sealed},
		{"other keys", other, `"x":1`, sealed},
		{"tampered", bURL, `"x":1`, sealed[:len(sealed)-2] + "AA"},
		{"empty", bURL, `"x":1`, ""},
	} {
		r := rpc{method: "test/seal", params: c.params, header: http.Header{mcp.HeaderSealedPrincipal: {c.sealed}}}.do(t, c.url)
		if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s: %d %s %q, want 401 invalid_token", c.name, r.status, r.body, r.header.Get("WWW-Authenticate"))
		}
	}

	mcp.SetStateClock(b, time.Minute+time.Second)
	if r := (rpc{method: "test/seal", params: `"x":1`, header: hdr}).do(t, bURL); r.status != 401 {
		t.Errorf("a minute later: %d %s, want 401", r.status, r.body)
	}
	mcp.SetStateClock(b, 0)

	// A bearer token wins over a sealed principal sent with it.
	r := rpc{method: "test/seal", token: adminToken, params: `"x":1`, header: hdr}.do(t, bURL)
	got = sealAnswer{}
	json.Unmarshal([]byte(r.body), &got)
	if r.status != 200 || got.Result.Who != "root" {
		t.Errorf("with a bearer token too: %d %s, want root's call", r.status, r.body)
	}
	_ = io.Discard
}
