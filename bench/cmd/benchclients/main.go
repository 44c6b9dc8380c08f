// Command benchclients measures the MCP clients of package clients side by
// side against one `mcpkit serve` at 2026-07-28, and prints a Markdown
// report: calls per second and allocations per call of each client over
// each transport, and each client's ratios to go-sdk's.
//
//	go run ./cmd/benchclients [-reps 5] [-calls 3000]
//
// Repetitions are interleaved (every client and transport once, then
// again), so that a noisy neighbour does not favour one client; the
// report gives the median and the range over repetitions.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/mcpkit/mcpkit/bench/clients"
)

type sample struct {
	callsPerSec float64
	allocs      float64
	bytes       float64
}

func main() {
	reps := flag.Int("reps", 5, "repetitions of every case")
	calls := flag.Int("calls", 3000, "calls per case and repetition")
	flag.Parse()
	defer clients.Cleanup()
	if err := run(*reps, *calls); err != nil {
		fmt.Fprintln(os.Stderr, "benchclients:", err)
		os.Exit(1)
	}
}

func run(reps, calls int) error {
	srv, err := clients.StartHTTP()
	if err != nil {
		return err
	}
	defer srv.Stop()
	ctx := context.Background()
	type key struct{ client, transport string }
	results := map[key][]sample{}
	for rep := range reps {
		for _, c := range clients.Clients {
			for _, tr := range clients.Transports {
				s, err := measure(ctx, c, tr, srv.URL, calls)
				if err != nil {
					return fmt.Errorf("%s over %s: %w", c.Name, tr, err)
				}
				results[key{c.Name, tr}] = append(results[key{c.Name, tr}], s)
				fmt.Fprintf(os.Stderr, "rep %d %s/%s: %.0f calls/s, %.0f allocs/call\n", rep+1, c.Name, tr, s.callsPerSec, s.allocs)
			}
		}
	}
	// mcpkit's client in memory, on its own (client and server in this
	// process: allocations are both sides').
	var mem []sample
	for range reps {
		caller, err := clients.MemoryCaller(ctx)
		if err != nil {
			return err
		}
		s, err := measureCaller(ctx, caller, calls)
		caller.Close()
		if err != nil {
			return fmt.Errorf("mcpkit in memory: %w", err)
		}
		mem = append(mem, s)
	}
	fmt.Printf("Measured with `go -C bench run ./cmd/benchclients -reps %d -calls %d` (%s, %d CPUs, %s): one call at a time, the server `mcpkit serve` in its own process; allocations are the client's.\n\n",
		reps, calls, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
	fmt.Println("| client | transport | calls/s (median, range) | allocs/call | bytes/call | calls/s vs go-sdk | allocs vs go-sdk |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, tr := range clients.Transports {
		base := results[key{"gosdk", tr}]
		for _, c := range clients.Clients {
			ss := results[key{c.Name, tr}]
			cps := median(ss, func(s sample) float64 { return s.callsPerSec })
			al := median(ss, func(s sample) float64 { return s.allocs })
			by := median(ss, func(s sample) float64 { return s.bytes })
			lo, hi := span(ss, func(s sample) float64 { return s.callsPerSec })
			ratio, aratio := "1", "1"
			if c.Name != "gosdk" {
				// Ratios per repetition (taken side by side), then the median.
				var rs, as []float64
				for i := range ss {
					rs = append(rs, ss[i].callsPerSec/base[i].callsPerSec)
					as = append(as, ss[i].allocs/base[i].allocs)
				}
				ratio = fmt.Sprintf("%.2fx", medianOf(rs))
				aratio = fmt.Sprintf("%.2fx", medianOf(as))
			}
			fmt.Printf("| %s | %s | %.0f (%.0f–%.0f) | %.0f | %.0f | %s | %s |\n", c.Name, tr, cps, lo, hi, al, by, ratio, aratio)
		}
	}
	lo, hi := span(mem, func(s sample) float64 { return s.callsPerSec })
	fmt.Printf("| mcpkit | memory (client and server in one process) | %.0f (%.0f–%.0f) | %.0f | %.0f | | |\n",
		median(mem, func(s sample) float64 { return s.callsPerSec }), lo, hi,
		median(mem, func(s sample) float64 { return s.allocs }), median(mem, func(s sample) float64 { return s.bytes }))
	return nil
}

// measure connects c and times calls tools/calls, counting the process's
// allocations (nothing else runs in it meanwhile).
func measure(ctx context.Context, c clients.Client, tr, url string, calls int) (sample, error) {
	caller, err := clients.Connect(ctx, c, tr, url)
	if err != nil {
		return sample{}, err
	}
	defer caller.Close()
	return measureCaller(ctx, caller, calls)
}

// measureCaller times calls tools/calls on a connected client.
func measureCaller(ctx context.Context, caller clients.Caller, calls int) (sample, error) {
	for range 100 { // warm up: connections, buffers, the server's caches
		if _, err := caller.Call(ctx); err != nil {
			return sample{}, err
		}
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for range calls {
		got, err := caller.Call(ctx)
		if err != nil {
			return sample{}, err
		}
		if got != clients.EchoText {
			return sample{}, fmt.Errorf("echo answered %q", got)
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	n := float64(calls)
	return sample{
		callsPerSec: n / elapsed.Seconds(),
		allocs:      float64(after.Mallocs-before.Mallocs) / n,
		bytes:       float64(after.TotalAlloc-before.TotalAlloc) / n,
	}, nil
}

func median(ss []sample, f func(sample) float64) float64 {
	var v []float64
	for _, s := range ss {
		v = append(v, f(s))
	}
	return medianOf(v)
}

func medianOf(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func span(ss []sample, f func(sample) float64) (float64, float64) {
	lo, hi := f(ss[0]), f(ss[0])
	for _, s := range ss {
		lo, hi = min(lo, f(s)), max(hi, f(s))
	}
	return lo, hi
}
