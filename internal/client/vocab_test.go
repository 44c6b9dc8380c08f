package client

import (
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
)

// The transport names, protocol versions, era names and error codes of
// this package are mcp's: a Conn's Transport() is what client.(*Client).Transport returns as an
// mcp.Transport, and the versions are the ones the server serves. (This
// package cannot import mcp: mcp's own tests reach it through
// internal/mcpwire.)
func TestVocabularyIsMCPs(t *testing.T) {
	for _, tt := range []struct{ here, mcp string }{
		{TransportHTTP, string(mcp.TransportStreamableHTTP)},
		{TransportSSE, string(mcp.TransportSSE)},
		{TransportStdio, string(mcp.TransportStdio)},
		{ModernVersions[0], mcp.LatestVersion},
		{LegacyVersions[0], mcp.LegacyVersion},
		{string(EraModern), mcp.EraModern.String()},
		{string(EraLegacy), mcp.EraLegacy.String()},
	} {
		if tt.here != tt.mcp {
			t.Errorf("internal/client says %q where mcp says %q", tt.here, tt.mcp)
		}
	}
	for _, tt := range []struct{ here, mcp int }{
		{CodeHeaderMismatch, mcp.CodeHeaderMismatch},
		{CodeMissingCapability, mcp.CodeMissingCapability},
		{CodeUnsupportedVersion, mcp.CodeUnsupportedVersion},
	} {
		if tt.here != tt.mcp {
			t.Errorf("internal/client says %d where mcp says %d", tt.here, tt.mcp)
		}
	}
	served := mcp.NewServer(nil).SupportedVersions()
	if got := append(append([]string{}, ModernVersions...), LegacyVersions...); !slices.Equal(got, served) {
		t.Errorf("internal/client speaks %v, the server serves %v", got, served)
	}
}
