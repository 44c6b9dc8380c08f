package mcp_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
