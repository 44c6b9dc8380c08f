package mcp

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// fakeBus is a Bus shared with other processes, as far as the server knows.
type fakeBus struct{ LocalBus }

// fakeSessions is a SessionStore shared with other processes.
type fakeSessions struct{ *MemorySessionStore }

// TestStateKeyWarning checks when a server without a requestState key
// says so: a warning at start-up where replicas would disagree (an HTTP
// listener that is not loopback-only, a shared Bus or SessionStore), and
// otherwise one Info line at the first seal, never again.
func TestStateKeyWarning(t *testing.T) {
	tests := []struct {
		name      string
		opts      ServerOptions
		addr      string // NewHTTPServer, if not empty
		atStart   string // the level logged before any seal ("" = nothing)
		afterSeal string // the level logged by the first seals
	}{
		{"stdio or in-process", ServerOptions{}, "", "", "INFO"},
		{"loopback IPv4", ServerOptions{}, "127.0.0.1:8080", "", "INFO"},
		{"loopback IPv6", ServerOptions{}, "[::1]:0", "", "INFO"},
		{"localhost", ServerOptions{}, "localhost:0", "", "INFO"},
		{"every interface", ServerOptions{}, ":8080", "WARN", ""},
		{"unspecified IP", ServerOptions{}, "0.0.0.0:8080", "WARN", ""},
		{"host name", ServerOptions{}, "mcp.example.com:443", "WARN", ""},
		{"shared bus", ServerOptions{Bus: &fakeBus{}}, "", "WARN", ""},
		{"shared sessions", ServerOptions{Legacy: LegacyOptions{SessionStore: fakeSessions{NewMemorySessionStore(0)}}}, "127.0.0.1:0", "WARN", ""},
		{"in-process bus", ServerOptions{Bus: new(LocalBus)}, "127.0.0.1:0", "", "INFO"},
		{"key configured", ServerOptions{State: StateOptions{Keys: [][]byte{bytes.Repeat([]byte{7}, 32)}}}, ":8080", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(StateKeysEnv, "")
			var buf bytes.Buffer
			tt.opts.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
				ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey {
						return slog.Attr{}
					}
					return a
				}}))
			s := NewServer(&tt.opts)
			if tt.addr != "" {
				s.NewHTTPServer(tt.addr, "")
			}
			if got := levelOf(t, buf.String()); got != tt.atStart {
				t.Errorf("at start: logged %q, want level %q", buf.String(), tt.atStart)
			}
			buf.Reset()
			for range 3 {
				s.state.keys()
			}
			if got := levelOf(t, buf.String()); got != tt.afterSeal {
				t.Errorf("after three seals: logged %q, want level %q", buf.String(), tt.afterSeal)
			}
		})
	}
}

// levelOf returns the level of the one requestState line in log ("" when
// there is none), failing the test on more than one line.
func levelOf(t *testing.T, log string) string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		if strings.Contains(l, "requestState") {
			lines = append(lines, l)
		}
	}
	switch len(lines) {
	case 0:
		return ""
	case 1:
		_, rest, _ := strings.Cut(lines[0], "level=")
		level, _, _ := strings.Cut(rest, " ")
		return level
	}
	t.Fatalf("%d requestState lines:\n%s", len(lines), log)
	return ""
}

// TestStateKeyTestKey checks that the test key is used quietly, and only
// when no key was configured.
func TestStateKeyTestKey(t *testing.T) {
	t.Setenv(StateKeysEnv, "")
	var buf bytes.Buffer
	s := NewServer(&ServerOptions{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	s.state.useTestKey()
	a := s.state.keys()
	b := NewServer(&ServerOptions{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	b.state.useTestKey()
	if buf.Len() != 0 {
		t.Errorf("logged %q, want nothing", buf.String())
	}
	if !bytes.Equal(a.keys[0].id[:], b.state.keys().keys[0].id[:]) {
		t.Error("two test servers seal with different keys")
	}
}
