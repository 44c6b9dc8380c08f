package protocol

import (
	"net/textproto"
	"slices"
	"strings"
	"testing"
)

// The version lists are newest first and disjoint, and IsLegacy tells them
// apart: the probe tries ModernVersions[0] and falls back to
// LegacyVersions[0], and servers list them in this order.
func TestVersions(t *testing.T) {
	for _, list := range [][]string{ModernVersions, LegacyVersions} {
		if !slices.IsSortedFunc(list, func(a, b string) int { return strings.Compare(b, a) }) {
			t.Errorf("%v is not newest first", list)
		}
	}
	if ModernVersions[0] != LatestVersion || LegacyVersions[0] != LegacyVersion {
		t.Errorf("the lists start with %s and %s, want %s and %s", ModernVersions[0], LegacyVersions[0], LatestVersion, LegacyVersion)
	}
	for _, tt := range []struct {
		v      string
		legacy bool
	}{
		{LatestVersion, false},
		{LegacyVersion, true},
		{Version20250618, true},
		{Version20250326, true},
		{Version20241105, true},
		{"2099-01-01", false},
		{"", false},
	} {
		if got := IsLegacy(tt.v); got != tt.legacy {
			t.Errorf("IsLegacy(%q) = %v, want %v", tt.v, got, tt.legacy)
		}
	}
}

// Only the codes of revision 2026-07-28's reserved range tell a modern
// server; JSON-RPC's own and the legacy resource code do not.
func TestIsModernCode(t *testing.T) {
	for _, tt := range []struct {
		code   int
		modern bool
	}{
		{CodeHeaderMismatch, true},
		{CodeMissingCapability, true},
		{CodeUnsupportedVersion, true},
		{CodeResourceNotFound, false},
		{-32601, false},
		{-32602, false},
		{-32023, false},
	} {
		if got := IsModernCode(tt.code); got != tt.modern {
			t.Errorf("IsModernCode(%d) = %v, want %v", tt.code, got, tt.modern)
		}
	}
}

func TestEraString(t *testing.T) {
	if EraModern.String() != "modern" || EraLegacy.String() != "legacy" {
		t.Errorf("eras are %q and %q, want modern and legacy", EraModern, EraLegacy)
	}
}

// The header names are canonical, as net/http's Header.Get and Set and
// the server's direct map lookups need.
func TestHeadersCanonical(t *testing.T) {
	for _, h := range []string{HeaderProtocolVersion, HeaderMethod, HeaderName, HeaderSessionID, HeaderParamPrefix + "Region"} {
		if c := textproto.CanonicalMIMEHeaderKey(h); c != h {
			t.Errorf("%q is not canonical (%q)", h, c)
		}
	}
}
