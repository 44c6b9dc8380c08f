package mcp_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestLegacyOnlyOptions checks the versions a server of each era choice
// announces, and that Legacy.Only with Legacy.Disable is refused by name.
func TestLegacyOnlyOptions(t *testing.T) {
	legacy := []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
	tests := []struct {
		name   string
		legacy mcp.LegacyOptions
		want   []string
	}{
		{"both", mcp.LegacyOptions{}, append([]string{mcp.LatestVersion}, legacy...)},
		{"modern", mcp.LegacyOptions{Disable: true}, []string{mcp.LatestVersion}},
		{"legacy", mcp.LegacyOptions{Only: true}, legacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.ServerOptions{Legacy: tt.legacy})
			if diff := cmp.Diff(tt.want, s.SupportedVersions()); diff != "" {
				t.Errorf("SupportedVersions (-want +got):\n%s", diff)
			}
		})
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "Legacy.Only and Legacy.Disable") {
			t.Errorf("panic %v, want one naming Legacy.Only and Legacy.Disable", r)
		}
	}()
	mcp.NewServer(&mcp.ServerOptions{Legacy: mcp.LegacyOptions{Only: true, Disable: true}})
}

// TestLegacyOnlyClientFallback checks that a client that finds the era
// out (client.AnyEra) over HTTP takes a Legacy.Only server for a legacy
// one, as it takes a server written before 2026-07-28, and that calls then
// work, there and in memory.
func TestLegacyOnlyClientFallback(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "old"}, Legacy: mcp.LegacyOptions{Only: true}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(ctx context.Context, req *mcp.ToolRequest, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	ts := httptest.NewServer(s)
	defer ts.Close()
	tests := []struct {
		name string
		tr   client.Transport
		eras client.EraPreference
	}{
		{"http", &client.HTTPTransport{URL: ts.URL}, client.AnyEra},
		// In memory the client finds no era out (it calls Handle, which
		// has no sessions): it is told.
		{"memory", &client.MemoryTransport{Server: s}, client.LegacyOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := client.Connect(ctx, tt.tr, &client.Options{ClientInfo: mcp.Implementation{Name: "t", Version: "1"}, Eras: tt.eras})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Era() != mcp.EraLegacy || c.ProtocolVersion() != "2025-11-25" {
				t.Errorf("era %q, version %q; want legacy at 2025-11-25", c.Era(), c.ProtocolVersion())
			}
			res, err := c.CallTool(ctx, "echo", map[string]any{"text": "hi"})
			if err != nil || len(res.Content) != 1 {
				t.Fatalf("echo = %+v, %v", res, err)
			}
			if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "hi" {
				t.Errorf("echo content %#v, want the text hi", res.Content[0])
			}
		})
	}
}
