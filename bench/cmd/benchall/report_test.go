package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/bench/load"
	"github.com/mcpkit/mcpkit/bench/servers"
)

func TestMedianAndThousands(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
		{nil, 0},
	}
	for _, tt := range tests {
		if got := median(tt.xs); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
	for in, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567.4: "1,234,567"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestRender checks that the report computes ratios per repetition, marks
// failing implementations as failing, and judges the targets.
func TestRender(t *testing.T) {
	c := &config{
		reps: 2, slices: 2, warmup: time.Millisecond, duration: time.Second, benchtime: time.Second,
		levels: []int{16}, impls: servers.Impls, transports: []string{load.HTTP},
		methods: []string{load.Discover}, inproc: true, command: "bench/run.sh",
	}
	r := &report{
		start: time.Now(), end: time.Now(), loadBefore: "1.00 1.00 1.00",
		runs:   map[runKey][]sample{},
		procs:  map[procKey][]procSample{},
		inproc: map[inprocKey][]inprocSample{},
		fanout: map[string][]fanoutSample{
			servers.Mcpkit: {{Fanout: load.Fanout{Latency: time.Millisecond, CPU: time.Millisecond}}, {Fanout: load.Fanout{Latency: 3 * time.Millisecond, CPU: time.Millisecond}}},
			servers.GoSDK:  {{err: errors.New("listener 7: stream ended")}},
			servers.McpGo:  {{Fanout: load.Fanout{Latency: 5 * time.Millisecond, CPU: 2 * time.Millisecond}}},
			servers.Floor:  {{err: load.ErrNoFanout}},
		},
	}
	rps := map[string][2]float64{
		servers.Mcpkit: {90, 80}, // ratios 0.9 and 1.0: median 0.95
		servers.GoSDK:  {5, 5},
		servers.Floor:  {100, 80},
	}
	for impl, v := range rps {
		cost := 1 // every measure of go-sdk is worse than mcpkit's
		if impl == servers.GoSDK {
			cost = 10
		}
		for rep, x := range v {
			k := runKey{load.HTTP, load.Discover, 16, impl}
			r.runs[k] = append(r.runs[k], sample{rep: rep, rps: x, cpuPerReq: time.Duration(cost) * 10 * time.Microsecond})
		}
		ps := procSample{firstDiscover: time.Duration(cost) * 6 * time.Millisecond, peakRSS: int64(cost) * 10 << 20}
		r.procs[procKey{load.HTTP, impl}] = []procSample{ps, ps}
		is := inprocSample{nsPerOp: int64(cost) * 100, allocsPerOp: int64(cost) * 2, bytesPerOp: int64(cost) * 100}
		r.inproc[inprocKey{load.Discover, impl}] = []inprocSample{is, is}
	}
	// mcp-go fails a run, but starts faster than mcpkit.
	k := runKey{load.HTTP, load.Discover, 16, servers.McpGo}
	r.runs[k] = []sample{{rep: 0, rps: 1e6, cpuPerReq: time.Microsecond}, {rep: 1, err: errors.New("content[0] is wrong")}}
	r.procs[procKey{load.HTTP, servers.McpGo}] = []procSample{{firstDiscover: time.Millisecond, peakRSS: 100 << 20}, {firstDiscover: time.Millisecond, peakRSS: 100 << 20}}
	r.inproc[inprocKey{load.Discover, servers.McpGo}] = []inprocSample{{nsPerOp: 1000, allocsPerOp: 300, bytesPerOp: 10000}, {nsPerOp: 1000, allocsPerOp: 300, bytesPerOp: 10000}}

	out := render(c, r)
	for _, want := range []string{
		"bench/run.sh",
		"| 16 | 85 <sub>(80–90)</sub> · **0.95×** | 5 <sub>(5–5)</sub> · **0.06×** | **FAIL** (1/2) | 90 <sub>(80–100)</sub> |",
		"| HTTP `server/discover` ≥ 0.8× the floor at 16 connections | 0.95× (85 vs 90 req/s) | met |",
		"mcp-go http `server/discover` ×16 (1 of 2 runs): content[0] is wrong",
		"| time to all listeners (ms) | 2.00 <sub>(1.00–3.00)</sub> | not available | 5.00 | not available |",
		"- go-sdk: not available: listener 7: stream ended",
		"- floor: not available: " + load.ErrNoFanout.Error(),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// mcp-go fails the case, so its 1e6 req/s must not put mcpkit behind;
	// its faster start does.
	var behind []string
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "- http ") {
			behind = append(behind, strings.TrimSpace(line))
		}
	}
	want := []string{"- http start to first discover: mcp-go 1.0 ms vs mcpkit 6.0 ms"}
	if diff := cmp.Diff(want, behind); diff != "" {
		t.Errorf("comparisons mcpkit is behind in (-want +got):\n%s", diff)
	}
}
