package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
)

// hostile answers server/discover properly and tools/call with answer.
func hostile(answer func(w http.ResponseWriter, id string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &req)
		if req.Method == "server/discover" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`))
			return
		}
		answer(w, string(req.ID))
	})
}

func TestHostileServers(t *testing.T) {
	sse := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
	}
	tests := []struct {
		name   string
		answer func(w http.ResponseWriter, id string)
		check  func(err error) bool
	}{
		{"oversized body", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"`))
			chunk := []byte(strings.Repeat("x", 1<<20))
			for range 17 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			w.Write([]byte(`"}]}}`))
		}, func(err error) bool { return errors.Is(err, client.ErrTooLarge) }},
		{"oversized SSE event", func(w http.ResponseWriter, id string) {
			sse(w)
			w.Write([]byte("data: "))
			chunk := []byte(strings.Repeat("x", 1<<20))
			for range 17 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, func(err error) bool { return errors.Is(err, client.ErrTooLarge) }},
		{"bad JSON", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{`))
		}, isProtocolError},
		{"HTML error page", func(w http.ResponseWriter, id string) {
			w.WriteHeader(502)
			w.Write([]byte(`<html>bad gateway</html>`))
		}, func(err error) bool {
			var pe *client.ProtocolError
			return errors.As(err, &pe) && pe.Status == 502
		}},
		{"wrong id", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":999999,"result":{"content":[]}}`))
		}, isProtocolError},
		{"result not an object", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":[1,2]}`))
		}, isProtocolError},
		{"malformed content", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"hologram"}]}}`))
		}, isProtocolError},
		{"endless input_required", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"input_required","requestState":"again"}}`))
		}, isProtocolError},
		{"endless SSE stream", func(w http.ResponseWriter, id string) {
			sse(w)
			for {
				if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				// The hostile server's pace, not a wait: it keeps the
				// stream busy until the client's own Timeout (3 s of
				// real time: the server is an httptest one on a real
				// socket) gives up.
				time.Sleep(10 * time.Millisecond)
			}
		}, func(err error) bool { return errors.Is(err, client.ErrTimeout) }},
		{"stream ends without a response", func(w http.ResponseWriter, id string) {
			sse(w)
			w.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"))
		}, isProtocolError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := httptest.NewServer(hostile(tt.answer))
			defer hs.Close()
			// Each case's error comes as soon as the client sees the limit
			// crossed (17 MiB under -race on a loaded machine can take more
			// than 3 s), so the timeout only bounds a failing test; in the
			// endless stream it is what is under test, and short.
			timeout := 30 * time.Second
			if tt.name == "endless SSE stream" {
				timeout = 3 * time.Second
			}
			c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: hs.URL}, &client.Options{Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.CallTool(context.Background(), "t", nil)
			if err == nil || !tt.check(err) {
				t.Errorf("CallTool = %v (%T), not the error expected", err, err)
			}
		})
	}
}

func isProtocolError(err error) bool {
	var pe *client.ProtocolError
	return errors.As(err, &pe)
}

// A stdio server that answers with the wrong id, or with garbage, leaves
// the call to its timeout rather than hanging it.
func TestHostileStdio(t *testing.T) {
	for mode, want := range map[string]error{"wrong-id": client.ErrTimeout, "garbage": client.ErrTimeout, "huge": client.ErrTooLarge} {
		t.Run(mode, func(t *testing.T) {
			c, err := client.Connect(context.Background(), selfCommand(mode), &client.Options{Timeout: 5 * time.Second, Eras: client.ModernOnly})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if mode == "huge" {
				ctx = context.Background()
			}
			if _, err := c.CallTool(ctx, "t", nil); !errors.Is(err, want) {
				t.Errorf("CallTool = %v, want %v", err, want)
			}
		})
	}
}

// hostileStdio serves one good server/discover and then answers every
// request with the wrong id or a line of garbage.
func hostileStdio(mode string) {
	dec := json.NewDecoder(os.Stdin)
	for {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if dec.Decode(&req) != nil {
			return
		}
		switch {
		case req.Method == "server/discover":
			os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}` + "\n")
			if mode == "deaf" {
				time.Sleep(time.Hour) // never read stdin again
			}
		case req.ID == nil:
		case mode == "huge":
			os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 17<<20) + `"}]}}` + "\n")
		case mode == "wrong-id":
			os.Stdout.WriteString(`{"jsonrpc":"2.0","id":"not-yours","result":{}}` + "\n")
		default:
			os.Stdout.WriteString("Warning: this is not JSON\n")
		}
	}
}
