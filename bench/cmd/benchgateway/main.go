// Command benchgateway measures what mcpkit gateway adds over mcpkit bridge
// (issue 27): tools/call through a gateway with one server against the
// bridge alone in front of the same backend, and tools/list merged from 10
// servers against one server's, over Streamable HTTP on loopback, each
// caller its own client.
//
//	go build -o /tmp/mcpkit ../cmd/mcpkit   # from the repository root
//	go run ./cmd/benchgateway -mcpkit /tmp/mcpkit
//
// Every backend is `mcpkit serve --stdio --fixtures --era legacy` (the
// bench of the bridge's backend), and every front runs with --max-sessions
// 1, so that all callers share one backend process per server. The targets
// run side by side and take turns in short slices (-slices), so that a
// change in the machine's load falls on all of them alike; a ratio is
// taken per slice, and the median of those is reported.
//
//   - calls: `tools/call test_simple_text` through `mcpkit bridge` and
//     through `mcpkit gateway` with that backend as its one server (the
//     tool is then fixtures_test_simple_text).
//   - lists: a whole tools/list (every page) through the bridge (one
//     server's list), through a gateway of that one server, and through a
//     gateway of 10 servers (the merged list, 10 times as many tools, in
//     pages of gateway.MinPageItems or more); and the first page alone,
//     through the bridge and through the gateway of 10.
//
// Requests the front sheds under load (its admission control's 503
// "Server busy") are counted apart from errors; the client does not retry
// them. "p50 per item" is the p50 divided by the items one operation
// returns.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/bench/load"
	"github.com/mcpkit/mcpkit/client"
)

func main() {
	mcpkit := flag.String("mcpkit", "mcpkit", "the mcpkit binary")
	duration := flag.Duration("duration", 4*time.Second, "measuring time per target, case and level (cut into -slices)")
	nslices := flag.Int("slices", 8, "how many turns the targets of a case take")
	callLevels := flag.String("call-levels", "16", "numbers of concurrent callers for tools/call")
	listLevels := flag.String("list-levels", "1,16", "numbers of concurrent callers for tools/list")
	servers := flag.Int("servers", 10, "servers behind the gateway of the list case")
	compareBin := flag.String("compare", "", "another mcpkit `BINARY` (an older build, say) whose gateway of 1 server joins the tools/call case")
	flag.Parse()
	dir, err := os.MkdirTemp("", "benchgateway-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	backend := []string{*mcpkit, "serve", "--stdio", "--fixtures", "--era", "legacy"}

	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			load.KillGroup(p)
			p.Process.Kill()
			p.Wait()
		}
	}()
	start := func(bin string, args ...string) string {
		url, cmd, err := load.StartLogged(60*time.Second, bin, args...)
		if err != nil {
			fail(err)
		}
		procs = append(procs, cmd)
		return url
	}
	gateway := func(bin, name string, n int) string {
		var b strings.Builder
		b.WriteString("servers:\n")
		for i := range n {
			fmt.Fprintf(&b, "  %s:\n    command: [", serverName(i, n))
			for j, a := range backend {
				if j > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q", a)
			}
			b.WriteString("]\n")
		}
		config := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(config, []byte(b.String()), 0o600); err != nil {
			fail(err)
		}
		return start(bin, "gateway", "--addr", "127.0.0.1:0", "--max-sessions", "1", "--config", config)
	}
	bridgeURL := start(*mcpkit, append([]string{"bridge", "--addr", "127.0.0.1:0", "--max-sessions", "1", "--"}, backend...)...)
	gateway1 := gateway(*mcpkit, "one", 1)
	gatewayN := gateway(*mcpkit, "many", *servers)

	fmt.Printf("Each row: %s in %d slices per target, the targets taking turns.\n\n", *duration, *nslices)
	fmt.Println("| case | target | callers | ops/s | p50 | p99 | errors | shed | items | p50 per item | ops/s ratio to the first (median of slices) |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	call := func(name string) op {
		return func(ctx context.Context, c *client.Client) (int, error) {
			_, err := c.CallTool(ctx, name, nil)
			return 1, err
		}
	}
	list := func(ctx context.Context, c *client.Client) (int, error) {
		n := 0
		for _, err := range c.ListTools(ctx) {
			if err != nil {
				return n, err
			}
			n++
		}
		return n, nil
	}
	callTargets := []target{
		{"mcpkit bridge", bridgeURL, call("test_simple_text")},
		{"mcpkit gateway, 1 server", gateway1, call(serverName(0, 1) + "_test_simple_text")},
	}
	if *compareBin != "" {
		callTargets = append(callTargets, target{"mcpkit gateway, 1 server, " + filepath.Base(*compareBin), gateway(*compareBin, "compare", 1), call(serverName(0, 1) + "_test_simple_text")})
	}
	for _, n := range levels(*callLevels) {
		compare("tools/call", n, *duration, *nslices, callTargets)
	}
	page := func(ctx context.Context, c *client.Client) (int, error) {
		raw, err := c.Call(ctx, "tools/list", nil)
		if err != nil {
			return 0, err
		}
		var p struct{ Tools []json.RawMessage }
		err = json.Unmarshal(raw, &p)
		return len(p.Tools), err
	}
	for _, n := range levels(*listLevels) {
		compare("tools/list (every page)", n, *duration, *nslices, []target{
			{"mcpkit bridge (one server's list)", bridgeURL, list},
			{"mcpkit gateway, 1 server", gateway1, list},
			{fmt.Sprintf("mcpkit gateway, %d servers (merged)", *servers), gatewayN, list},
		})
		compare("tools/list (first page)", n, *duration, *nslices, []target{
			{"mcpkit bridge (one server's list)", bridgeURL, page},
			{fmt.Sprintf("mcpkit gateway, %d servers (merged)", *servers), gatewayN, page},
		})
	}
}

// serverName is the name of server i of n in a gateway's configuration.
func serverName(i, n int) string {
	if n == 1 {
		return "fixtures"
	}
	return "s" + strconv.Itoa(i)
}

func levels(s string) []int {
	var out []int
	for _, l := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(l)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchgateway:", err)
	os.Exit(1)
}

// op is one operation of a caller; it returns how many items it saw.
type op func(ctx context.Context, c *client.Client) (int, error)

type target struct {
	name, url string
	op        op
}

type sample struct {
	lat    []time.Duration
	ops    int
	errors int
	shed   int
	items  int
	d      time.Duration
}

// compare measures the targets at n callers, taking turns for slices
// slices of d/slices each, and prints a row per target.
func compare(what string, n int, d time.Duration, nslices int, targets []target) {
	ctx := context.Background()
	clients := make([][]*client.Client, len(targets))
	for i, t := range targets {
		for range n {
			c, err := client.Connect(ctx, &client.HTTPTransport{URL: t.url}, &client.Options{NoCache: true})
			if err != nil {
				fail(fmt.Errorf("%s: connect: %w", t.name, err))
			}
			defer c.Close()
			if _, err := t.op(ctx, c); err != nil { // warm-up
				fail(fmt.Errorf("%s: warm-up: %w", t.name, err))
			}
			clients[i] = append(clients[i], c)
		}
	}
	total := make([]sample, len(targets))
	ratios := make([][]float64, len(targets))
	slice := d / time.Duration(nslices)
	for range nslices {
		var first float64
		for i, t := range targets {
			s := run(ctx, what+" "+t.name, clients[i], t.op, slice)
			rate := float64(s.ops) / s.d.Seconds()
			if i == 0 {
				first = rate
			}
			if first > 0 {
				ratios[i] = append(ratios[i], rate/first)
			}
			total[i].lat = append(total[i].lat, s.lat...)
			total[i].ops += s.ops
			total[i].errors += s.errors
			total[i].shed += s.shed
			total[i].items = s.items
			total[i].d += s.d
		}
	}
	for i, t := range targets {
		s := total[i]
		lat := s.lat
		sortDurations(lat)
		var p50, p99 time.Duration
		if len(lat) > 0 {
			p50, p99 = lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*99/100].Round(time.Microsecond)
		}
		ratio := "1"
		if i > 0 {
			ratio = fmt.Sprintf("%.2fx", load.Median(ratios[i]))
		}
		perItem := "-"
		if s.items > 1 {
			perItem = (p50 / time.Duration(s.items)).Round(100 * time.Nanosecond).String()
		}
		fmt.Printf("| %s | %s | %d | %.0f | %s | %s | %d | %d | %d | %s | %s |\n", what, t.name, n, float64(s.ops)/s.d.Seconds(), p50, p99, s.errors, s.shed, s.items, perItem, ratio)
	}
}

// run has every client do op in a loop for d; the first error is
// printed to stderr, the others counted.
func run(ctx context.Context, name string, clients []*client.Client, o op, d time.Duration) sample {
	var (
		firstErr sync.Once
		mu       sync.Mutex
		s        sample
		wg       sync.WaitGroup
	)
	t0 := time.Now()
	end := t0.Add(d)
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			bad, shed, items := 0, 0, 0
			for time.Now().Before(end) {
				t := time.Now()
				n, err := o(ctx, c)
				if err != nil && strings.Contains(err.Error(), "Server busy") {
					shed++ // the front's admission control: 503, retry later
					continue
				}
				if err != nil {
					if bad == 0 {
						firstErr.Do(func() { fmt.Fprintf(os.Stderr, "benchgateway: %s: %v\n", name, err) })
					}
					bad++
					continue
				}
				items = n
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			s.lat = append(s.lat, mine...)
			s.ops += len(mine)
			s.errors += bad
			s.shed += shed
			s.items = max(s.items, items)
			mu.Unlock()
		}()
	}
	wg.Wait()
	s.d = time.Since(t0)
	return s
}

func sortDurations(d []time.Duration) { slices.Sort(d) }
