package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzLegacyHTTP posts arbitrary bodies within a legacy session, and GETs
// with arbitrary Last-Event-ID values: the server must never panic or
// hang, and must answer with a status of the legacy transport and one
// JSON-RPC message (or an SSE stream of them).
func FuzzLegacyHTTP(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":1}}}`), "1_0")
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`), "0_0")
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`), "x")
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`), "9_9")
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`), "")
	s := fuzzServer()
	init := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`))
	init.Header.Set("Content-Type", "application/json")
	iw := httptest.NewRecorder()
	s.ServeHTTP(iw, init)
	sid := iw.Header().Get("Mcp-Session-Id")
	if sid == "" {
		f.Fatal("initialize failed")
	}
	f.Fuzz(func(t *testing.T, body []byte, lastEventID string) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Mcp-Session-Id", sid)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		checkLegacyResponse(t, w, 200, 202, 400, 404, 413)

		if !headerSafe(lastEventID) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		g := httptest.NewRequest(http.MethodGet, "/mcp", nil).WithContext(ctx)
		g.Header.Set("Mcp-Session-Id", sid)
		g.Header.Set("Last-Event-ID", lastEventID)
		gw := httptest.NewRecorder()
		s.ServeHTTP(gw, g)
		checkLegacyResponse(t, gw, 200, 204, 400)
	})
}

func checkLegacyResponse(t *testing.T, w *httptest.ResponseRecorder, statuses ...int) {
	t.Helper()
	ok := false
	for _, st := range statuses {
		ok = ok || w.Code == st
	}
	if !ok {
		t.Fatalf("unexpected status %d: %s", w.Code, w.Body)
	}
	out := w.Body.Bytes()
	switch {
	case w.Code == 202 || w.Code == 204:
		if len(out) != 0 {
			t.Fatalf("%d with a body", w.Code)
		}
	case strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream"):
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			// Priming events have empty data.
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != "" && !json.Valid([]byte(d)) {
				t.Fatalf("SSE data is not JSON: %s", d)
			}
		}
	default:
		if !json.Valid(out) || bytes.Contains(out, []byte("\n")) {
			t.Fatalf("response is not single-line JSON: %q", out)
		}
	}
}

// FuzzLegacyStdio feeds arbitrary lines to a stdio connection that opened
// with initialize: it must end, never panic, and write only whole lines of
// valid JSON.
func FuzzLegacyStdio(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n"))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"x\"}}}\n"))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":{}}\n{bad\n"))
	s := fuzzServer()
	init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"f","version":"1"}}}` + "\n")
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if err := s.ServeStdio(context.Background(), bytes.NewReader(append(init[:len(init):len(init)], in...)), &out); err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
			if !json.Valid(line) {
				t.Fatalf("output line is not JSON: %q", line)
			}
		}
	})
}

// FuzzParseEventID checks that Last-Event-ID parsing round-trips.
func FuzzParseEventID(f *testing.F) {
	for _, s := range []string{"0_0", "12_7", "_", "1_", "-1_2", "1_2_3", "9223372036854775807_1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		num, seq, ok := parseEventID(id)
		if !ok {
			return
		}
		if num < 0 || seq < 0 {
			t.Fatalf("%q parsed to negative %d, %d", id, num, seq)
		}
	})
}
