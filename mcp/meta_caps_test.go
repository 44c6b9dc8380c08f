package mcp

import (
	"encoding/json"
	"hash/maphash"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// capsSeeds are clientCapabilities values: the common shapes fastCaps
// decodes and neighbours it must leave to encoding/json.
var capsSeeds = []string{
	`{}`,
	`{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}`,
	`{"roots":{"listChanged":false}}`,
	`{ "roots" : { "listChanged" : true } , "sampling" : { } }`,
	`{"roots":{"listChanged":true},"roots":{}}`,
	`{"roots":{"listChanged":true,"listChanged":false}}`,
	`{"roots":{}}`,
	`{"roots":null}`,
	`{"roots":{"listChanged":null}}`,
	`{"roots":{"listChanged":1}}`,
	`{"Roots":{"ListChanged":true}}`,
	`{"r\u006fots":{}}`,
	`{"sampling":{"tools":{}}}`,
	`{"sampling":{},"sampling":{"context":{}}}`,
	`{"elicitation":{"form":{},"url":{}}}`,
	`{"elicitation":[]}`,
	`{"experimental":{"x":{}}}`,
	`{"extensions":{"io.example/ext":{}}}`,
	`{"unknown":1}`,
	`null`,
	`[]`,
	`"caps"`,
}

// decodeCapsReference is what decodeInfo did before fastCaps: encoding/json
// alone.
func decodeCapsReference(raw []byte) (ClientCapabilities, bool) {
	var c ClientCapabilities
	err := json.Unmarshal(raw, &c)
	return c, err == nil
}

// TestFastCapsCommonShapes checks that the shapes clients send are decoded
// by the fast path, with encoding/json's result, and without allocating.
func TestFastCapsCommonShapes(t *testing.T) {
	for _, raw := range []string{
		`{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}`,
		`{"roots":{"listChanged":false}}`,
		`{"sampling":{}}`,
		`{"elicitation":{}}`,
	} {
		var c ClientCapabilities
		var st capStore
		if !fastCaps([]byte(raw), &c, &st, new(RootsCapability)) {
			t.Errorf("fastCaps(%s) declined a common shape", raw)
			continue
		}
		want, _ := decodeCapsReference([]byte(raw))
		if d := cmp.Diff(want, c); d != "" {
			t.Errorf("fastCaps(%s) differs from encoding/json (-want +got):\n%s", raw, d)
		}
	}
	// The RequestInfo lives in the request's exchange, on the heap anyway:
	// decoding into it must add nothing.
	rm := reqMeta{caps: []byte(capsSeeds[1])}
	info := new(RequestInfo)
	allocs := testing.AllocsPerRun(100, func() {
		*info = RequestInfo{}
		if rm.decodeInfo(info, LatestVersion) != nil || info.ClientCapabilities.Roots == nil {
			t.Fatal("decodeInfo failed on the common shape")
		}
	})
	if allocs != 0 {
		t.Errorf("decodeInfo of the common capabilities: %v allocations, want 0", allocs)
	}
}

// FuzzFastCaps checks decodeInfo's capabilities against encoding/json on
// any valid JSON: the same error or the same value, whether or not the fast
// path took it.
func FuzzFastCaps(f *testing.F) {
	for _, s := range capsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // decodeInfo only sees spans of a validated request
		}
		want, wantOK := decodeCapsReference(raw)
		var c ClientCapabilities
		var st capStore
		if fastCaps(raw, &c, &st, new(RootsCapability)) {
			if !wantOK {
				t.Fatalf("fastCaps accepted %s, encoding/json rejects it", raw)
			}
			if d := cmp.Diff(want, c); d != "" {
				t.Fatalf("fastCaps(%s) differs from encoding/json (-want +got):\n%s", raw, d)
			}
		}
		rm := reqMeta{caps: raw}
		var info RequestInfo
		err := rm.decodeInfo(&info, LatestVersion)
		if (err == nil) != wantOK {
			t.Fatalf("decodeInfo(%s): error %v, encoding/json ok=%v", raw, err, wantOK)
		}
		if err == nil {
			if d := cmp.Diff(want, info.ClientCapabilities); d != "" {
				t.Fatalf("decodeInfo(%s) differs from encoding/json (-want +got):\n%s", raw, d)
			}
		}
	})
}

// TestClientInfoCache checks that a request reads its own clientInfo
// whatever the previous request sent.
func TestClientInfoCache(t *testing.T) {
	cache := clientInfoCache{seed: maphash.MakeSeed()}
	for _, tt := range []struct {
		raw  string
		want Implementation
	}{
		{`{"name":"a","version":"1"}`, Implementation{Name: "a", Version: "1"}},
		{`{"name":"a","version":"1"}`, Implementation{Name: "a", Version: "1"}},
		{`{"name":"b","version":"1","title":"B"}`, Implementation{Name: "b", Version: "1", Title: "B"}},
		{`{"name":"a","version":"1"}`, Implementation{Name: "a", Version: "1"}},
		{`{"name":"\u0061"}`, Implementation{Name: "a"}},
	} {
		rm := reqMeta{clientInfo: []byte(tt.raw)}
		var info RequestInfo
		if err := rm.decodeInfoCached(&info, "v", &cache); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, info.ClientInfo); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.raw, diff)
		}
	}
}
