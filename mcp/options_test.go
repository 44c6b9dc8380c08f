package mcp

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestOptionsCannotBeOff checks the convention's second half: a numeric
// setting without an off panics on a negative value, naming the setting.
func TestOptionsCannotBeOff(t *testing.T) {
	tests := []struct {
		name string
		opts ServerOptions
	}{
		{"MaxMessageBytes", ServerOptions{MaxMessageBytes: Off}},
		{"PageSize", ServerOptions{PageSize: Off}},
		{"HTTP.MaxHeaderBytes", ServerOptions{HTTP: HTTPOptions{MaxHeaderBytes: Off}}},
		{"State.TTL", ServerOptions{State: StateOptions{TTL: -time.Second}}},
		{"Legacy.SessionIdleTimeout", ServerOptions{Legacy: LegacyOptions{SessionIdleTimeout: Off}}},
		{"Legacy.MaxSessions", ServerOptions{Legacy: LegacyOptions{MaxSessions: Off}}},
		{"Legacy.ClientRequestTimeout", ServerOptions{Legacy: LegacyOptions{ClientRequestTimeout: Off}}},
		{"Tasks.PollInterval", ServerOptions{Tasks: TaskOptions{PollInterval: Off}}},
		{"Tasks.MaxRunning", ServerOptions{Tasks: TaskOptions{MaxRunning: Off}}},
		{"Tasks.Heartbeat", ServerOptions{Tasks: TaskOptions{Heartbeat: Off}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tt.name+" cannot be off") {
					t.Errorf("panic %q, want one naming %s", msg, tt.name)
				}
			}()
			NewServer(&tt.opts)
		})
	}
}

// TestOptionsOff checks what Off means for the settings that can be off.
func TestOptionsOff(t *testing.T) {
	s := NewServer(&ServerOptions{
		Cache:  CacheOptions{TTL: Off},
		HTTP:   HTTPOptions{KeepAlive: Off},
		Listen: ListenOptions{MaxSubscriptions: Off},
		Tasks:  TaskOptions{TTL: Off, SyncWait: Off},
	})
	if got := string(s.cacheHint); got != `"ttlMs":0,"cacheScope":"public"` {
		t.Errorf("cache hint %s, want ttlMs 0", got)
	}
	if s.keepAlive >= 0 {
		t.Errorf("keep-alive %v, want none", s.keepAlive)
	}
	if !s.listen.enabled() || s.listen.max != math.MaxInt {
		t.Errorf("listen enabled %v with cap %d, want enabled without a cap", s.listen.enabled(), s.listen.max)
	}
	if s.tasks.ttl >= 0 || s.tasks.syncWait >= 0 {
		t.Errorf("tasks ttl %v, sync wait %v; want both off", s.tasks.ttl, s.tasks.syncWait)
	}
	if d := NewServer(&ServerOptions{Listen: ListenOptions{Disable: true}}); d.listen.enabled() {
		t.Error("Listen.Disable left subscriptions/listen on")
	}
	if d := NewServer(&ServerOptions{Legacy: LegacyOptions{Disable: true}}); d.legacy != nil {
		t.Error("Legacy.Disable left the legacy era on")
	}
}

// TestMaxMessageBytesEveryTransport checks that one limit bounds a
// Streamable HTTP body and a stdio line alike.
func TestMaxMessageBytesEveryTransport(t *testing.T) {
	s := NewServer(&ServerOptions{MaxMessageBytes: 200})
	msg := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"pad":"` + strings.Repeat("x", 200) + `"}}}`

	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("HTTP: status %d, want 413", rec.Code)
	}

	var out bytes.Buffer
	if err := s.ServeStdio(context.Background(), strings.NewReader(msg+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Message too large") {
		t.Errorf("stdio: answered %q, want a message-too-large error", out.String())
	}
}
