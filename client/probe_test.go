package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/client"
)

// TestProbe checks the steps Connect reports: one server/discover for a
// modern server, discover then initialize for a legacy one.
func TestProbe(t *testing.T) {
	hs := httptest.NewServer(testServer(t))
	defer hs.Close()
	tests := []struct {
		era      client.EraPreference
		requests []string
	}{
		{client.AnyEra, []string{"server/discover at 2026-07-28"}},
		{client.LegacyOnly, []string{"initialize at 2025-11-25"}},
	}
	for _, tt := range tests {
		c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: hs.URL}, &client.Options{Eras: tt.era})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, st := range c.Probe() {
			got = append(got, st.Request)
			if st.Status != http.StatusOK || st.Latency <= 0 || st.Answer == "" || st.Meaning == "" {
				t.Errorf("era %q: step %+v: want HTTP 200, a latency, an answer and its meaning", tt.era, st)
			}
		}
		if strings.Join(got, "; ") != strings.Join(tt.requests, "; ") {
			t.Errorf("era %q: steps %q, want %q", tt.era, got, tt.requests)
		}
		if c.ConnectLatency() <= 0 {
			t.Errorf("era %q: ConnectLatency = %v", tt.era, c.ConnectLatency())
		}
		if _, ok := c.ProcessExit(); ok {
			t.Errorf("era %q: ProcessExit over HTTP", tt.era)
		}
		c.Close()
	}
}

// TestConnectErrorKinds checks how failures to connect are classified.
func TestConnectErrorKinds(t *testing.T) {
	notMCP := httptest.NewServer(http.NotFoundHandler())
	defer notMCP.Close()
	tests := []struct {
		name string
		tr   client.Transport
		kind client.FailKind
	}{
		{"connection refused", &client.HTTPTransport{URL: "http://127.0.0.1:1/mcp"}, client.Unreachable},
		{"404 to everything", &client.HTTPTransport{URL: notMCP.URL}, client.NotMCP},
	}
	for _, tt := range tests {
		_, err := client.Connect(context.Background(), tt.tr, nil)
		var ce *client.ConnectError
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v is not a *client.ConnectError", tt.name, err)
			continue
		}
		if ce.Kind != tt.kind || len(ce.Steps) == 0 || ce.Exit != nil {
			t.Errorf("%s: kind %v, %d steps, exit %+v; want %v with steps, no exit", tt.name, ce.Kind, len(ce.Steps), ce.Exit, tt.kind)
		}
	}
}

// TestProcessExit checks that a stdio server's exit is reported after
// Close, and on a failed Connect.
func TestProcessExit(t *testing.T) {
	c, err := client.Connect(context.Background(), selfCommand("serve"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.ProcessExit(); ok {
		t.Errorf("ProcessExit while the server runs")
	}
	c.Close()
	if e, ok := c.ProcessExit(); !ok || e.Code != 0 || e.Forced != "" {
		t.Errorf("ProcessExit after Close = %+v, %v; want code 0, not forced", e, ok)
	}
	_, err = client.Connect(context.Background(), selfCommand("crash"), nil)
	var ce *client.ConnectError
	if !errors.As(err, &ce) || ce.Exit == nil || ce.Exit.Code != 3 {
		t.Errorf("crashed server: %v (exit %+v), want a ConnectError with exit code 3", err, ce)
	}
}

// Done returns one channel however often it is called, and watching it
// starts no goroutine (a supervisor calls it in its loops); Close closes
// it.
func TestDoneCostsNoGoroutine(t *testing.T) {
	c, err := client.Connect(context.Background(), selfCommand("serve"), nil)
	if err != nil {
		t.Fatal(err)
	}
	done := c.Done()
	g0 := runtime.NumGoroutine()
	for range 100 {
		if c.Done() != done {
			t.Fatal("Done returned another channel")
		}
	}
	if g := runtime.NumGoroutine(); g > g0 {
		t.Errorf("%d goroutines after 100 calls of Done, %d before", g, g0)
	}
	c.Close()
	select {
	case <-done:
	default:
		t.Fatal("Done not closed after Close")
	}
}
