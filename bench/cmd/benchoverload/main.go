// Command benchoverload measures overload (issue 20, goal 2): how each
// implementation behaves when the offered load is past what it can serve.
// bench/overload.sh runs it.
//
// For each tool (burn: about 1 ms of CPU per call, calibrated once here and
// given to every server; sleep: 50 ms without CPU) it first measures each
// implementation's capacity in a closed loop (-cap-conns connections, the
// answers per second), then sends open-loop load at multiples (-multiples,
// default 1, 2 and 4) of mcpkit's capacity: the same absolute rates for
// every implementation, Poisson arrivals, each run on a fresh server
// process, the implementations taking turns at each rate. Every answer is
// checked. It reports per run the offered rate, the goodput (correct
// answers per second), the 503s with Retry-After (shed), other errors,
// timeouts, the requests the client could not send on time, the p50/p99/max
// latency of the answered requests from their scheduled send time, the
// server's CPU and peak RSS, and the load average: Markdown for
// BENCHMARKS.md, with a text curve per tool.
//
// Every server is a benchserver process on 127.0.0.1 that this command
// starts and stops; every run is bounded (its schedule, a per-request
// timeout), so the whole command stops by itself: about 5 minutes with the
// defaults.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/bench/load"
	"github.com/mcpkit/mcpkit/bench/servers"
)

type config struct {
	impls       []string
	tools       []string
	multiples   []float64
	duration    time.Duration
	warmup      time.Duration
	capDuration time.Duration
	timeout     time.Duration
	maxConns    int
	burnConns   int
	sleepLimit  int
	poisson     bool
	burnIters   int
	burn        time.Duration
	reps        int
	bins        map[string]string
	// procs is the server's GOMAXPROCS in this pass (0: inherited), and
	// serverCPUs the CPUs it is pinned to ("": not pinned).
	procs      int
	serverCPUs string
}

// variant is one server configuration under test: an implementation and
// the benchserver flags that configure it.
type variant struct {
	name, impl string
	flags      []string
}

func main() {
	impls := flag.String("impls", "mcpkit,gosdk,mcpgo", "comma-separated implementations, mcpkit first; mcpkit-fixed is mcpkit with its adaptive in-flight limit off (a fixed limit)")
	tools := flag.String("tools", "burn,sleep", "comma-separated tools: burn (-burn of CPU, 1 ms by default), sleep (50 ms)")
	burn := flag.Duration("burn", time.Millisecond, "CPU time of one burn call (calibrated here)")
	procsList := flag.String("gomaxprocs", "", "comma-separated GOMAXPROCS values for the server processes, one pass each with a goal table (issue 24 item 9); empty: inherited, one pass")
	pin := flag.Bool("pin", true, "with -gomaxprocs P and taskset present: pin the server to CPUs 0..P-1 and this driver to the others, when the machine has more than P CPUs")
	reps := flag.Int("reps", 1, "open-loop runs per implementation and rate (each on a fresh server); the goal table uses their median")
	multiples := flag.String("multiples", "1,2,4", "offered load as multiples of mcpkit's measured capacity")
	duration := flag.Duration("duration", 10*time.Second, "measured part of each open-loop run")
	warmup := flag.Duration("warmup", time.Second, "open-loop warm-up at the same rate, not counted")
	capDuration := flag.Duration("cap-duration", 3*time.Second, "closed-loop capacity measurement per implementation and tool")
	timeout := flag.Duration("timeout", 5*time.Second, "per-request timeout, from the scheduled send time")
	maxConns := flag.Int("max-conns", 4096, "cap on the client's keep-alive connections per run")
	burnConns := flag.Int("burn-conns", 16, "closed-loop connections of the burn tool's capacity run")
	sleepLimit := flag.Int("sleep-inflight", 128, "mcpkit's in-flight limit (Quotas.MaxInFlightRequests) in the sleep runs, and the closed-loop connections of their capacity run: capacity is about this / 50 ms")
	arrivals := flag.String("arrivals", "poisson", "arrival schedule: poisson or constant")
	burnIters := flag.Int("burn-iters", 0, "rounds of the burn loop per call (0: calibrate to -burn of CPU here)")
	out := flag.String("out", "-", "write the Markdown report to `FILE` (-: stdout)")
	flag.Parse()

	cfg := config{
		duration: *duration, warmup: *warmup, capDuration: *capDuration, timeout: *timeout,
		maxConns: *maxConns, burnConns: *burnConns, sleepLimit: *sleepLimit,
		poisson: *arrivals == "poisson", burnIters: *burnIters, burn: *burn, reps: max(1, *reps), bins: map[string]string{},
	}
	var procs []int
	for _, f := range splitList(*procsList) {
		p, err := strconv.Atoi(f)
		if err != nil || p <= 0 {
			fatal(fmt.Errorf("-gomaxprocs: %q is not a positive number", f))
		}
		procs = append(procs, p)
	}
	if *arrivals != "poisson" && *arrivals != "constant" {
		fatal(fmt.Errorf("-arrivals %q: want poisson or constant", *arrivals))
	}
	cfg.impls = splitList(*impls)
	cfg.tools = splitList(*tools)
	for _, f := range splitList(*multiples) {
		m, err := strconv.ParseFloat(f, 64)
		if err != nil || m <= 0 {
			fatal(fmt.Errorf("-multiples: %q is not a positive number", f))
		}
		cfg.multiples = append(cfg.multiples, m)
	}
	if len(cfg.impls) == 0 || implOf(cfg.impls[0]) != servers.Mcpkit {
		fatal(fmt.Errorf("-impls must start with mcpkit: the rates are multiples of its capacity"))
	}
	for _, t := range cfg.tools {
		if t != servers.BurnTool && t != servers.SleepTool {
			fatal(fmt.Errorf("-tools: unknown tool %q", t))
		}
	}
	if cfg.burnIters <= 0 {
		cfg.burnIters = servers.CalibrateBurn(cfg.burn)
	}

	tmp, err := os.MkdirTemp("", "benchoverload")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	for _, v := range cfg.impls {
		impl := implOf(v)
		if _, ok := cfg.bins[impl]; ok {
			continue
		}
		bin := filepath.Join(tmp, "benchserver-"+impl)
		build := exec.Command("go", "build", "-tags", "only_"+impl, "-o", bin, "./cmd/benchserver")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fatal(fmt.Errorf("building benchserver for %s: %w", impl, err))
		}
		cfg.bins[impl] = bin
	}

	var w io.Writer = os.Stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			fatal(err)
		}
		defer f.Close()
		w = io.MultiWriter(f, os.Stderr)
	}
	cmdline := "bench/overload.sh"
	if len(os.Args) > 1 {
		cmdline += " " + strings.Join(os.Args[1:], " ")
	}
	fmt.Fprintf(w, "Run %s on %s/%s, %d CPUs, %s; load average at start: %s. Command: `%s`.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), load.LoadAverage(), cmdline)
	fmt.Fprintf(w, "burn: %d rounds of the loop per call (calibrated to %v of CPU in the driver's process). Arrivals: %s; each open-loop run %v after a %v warm-up, on a fresh server process; per-request timeout %v; at most %d client connections; %d run(s) per rate.\n\n",
		cfg.burnIters, cfg.burn, *arrivals, cfg.duration, cfg.warmup, cfg.timeout, cfg.maxConns, cfg.reps)
	if len(procs) == 0 {
		for _, tool := range cfg.tools {
			runTool(w, cfg, tool)
		}
		fmt.Fprintf(w, "Load average at the end: %s.\n", load.LoadAverage())
		return
	}
	var goals []goalRow
	for _, p := range procs {
		pc := cfg
		pc.procs = p
		pc.serverCPUs = pinFor(w, p, *pin)
		fmt.Fprintf(w, "## Server GOMAXPROCS=%d\n\n", p)
		for _, tool := range cfg.tools {
			goals = append(goals, runTool(w, pc, tool)...)
		}
	}
	goalTable(w, goals)
}

// implOf returns the implementation of a variant name.
func implOf(v string) string {
	if v == "mcpkit-fixed" {
		return servers.Mcpkit
	}
	return v
}

func (cfg config) variant(name, tool string) variant {
	v := variant{name: name, impl: implOf(name), flags: []string{"-burn-iters", strconv.Itoa(cfg.burnIters)}}
	if tool == servers.SleepTool && v.impl == servers.Mcpkit {
		v.flags = append(v.flags, "-max-inflight", strconv.Itoa(cfg.sleepLimit))
	}
	if name == "mcpkit-fixed" {
		v.flags = append(v.flags, "-fixed-inflight")
	}
	return v
}

func (cfg config) start(v variant) (*load.Proc, error) {
	var argv []string
	if cfg.procs > 0 {
		// env and taskset exec the server: its pid, CPU time and RSS are
		// the server's.
		argv = append(argv, "env", "GOMAXPROCS="+strconv.Itoa(cfg.procs))
	}
	if cfg.serverCPUs != "" {
		argv = append(argv, "taskset", "-c", cfg.serverCPUs)
	}
	argv = append(argv, cfg.bins[v.impl])
	return load.Start(append(argv, v.flags...), v.impl, load.HTTP)
}

// pinFor returns the CPUs to pin a server of GOMAXPROCS p to, and pins
// this driver to the rest: when pin is set, taskset exists and the machine
// has more CPUs than p. It says what it did on w.
func pinFor(w io.Writer, p int, pin bool) string {
	n := runtime.NumCPU()
	why := ""
	switch _, err := exec.LookPath("taskset"); {
	case !pin:
		why = "-pin=false"
	case err != nil:
		why = "no taskset"
	case n <= p:
		why = fmt.Sprintf("%d CPUs, not more than GOMAXPROCS", n)
	}
	if why != "" {
		exec.Command("taskset", "-a", "-p", "-c", fmt.Sprintf("0-%d", n-1), strconv.Itoa(os.Getpid())).Run()
		fmt.Fprintf(w, "Not pinned (%s): the server and this load generator share the CPUs.\n\n", why)
		return ""
	}
	server := fmt.Sprintf("0-%d", p-1)
	client := fmt.Sprintf("%d-%d", p, n-1)
	if out, err := exec.Command("taskset", "-a", "-p", "-c", client, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
		fmt.Fprintf(w, "Not pinned (taskset on the driver failed: %v: %s).\n\n", err, strings.TrimSpace(string(out)))
		return ""
	}
	fmt.Fprintf(w, "Pinned with taskset: the server to CPUs %s, this load generator to CPUs %s.\n\n", server, client)
	return server
}

type run struct {
	v        variant
	multiple float64
	r        load.OpenLoopResult
	rss      int64
	load     string
	err      error
}

func runTool(w io.Writer, cfg config, tool string) []goalRow {
	method := load.CallBurn
	capConns := cfg.burnConns
	if tool == servers.SleepTool {
		method = load.CallSleep
		capConns = cfg.sleepLimit
	}
	fmt.Fprintf(w, "### `tools/call` of `%s`\n\n", tool)
	// Capacity, closed loop.
	capacity := map[string]float64{}
	fmt.Fprintf(w, "Capacity (closed loop, %d connections, %v per implementation; mcpkit with its adaptive limit off, which would shed a closed loop wider than its floor):\n\n", capConns, cfg.capDuration)
	fmt.Fprintln(w, "| impl | answers/s | server CPU per call | load average |")
	fmt.Fprintln(w, "| --- | ---: | ---: | --- |")
	for _, name := range cfg.impls {
		v := cfg.variant(name, tool)
		if v.impl == servers.Mcpkit && name != "mcpkit-fixed" {
			// A closed loop of more connections than the adaptive
			// limit's floor is shed; the capacity to serve is the same.
			v.flags = append(v.flags, "-fixed-inflight")
		}
		p, err := cfg.start(v)
		if err != nil {
			fmt.Fprintf(w, "| %s | failed: %v | | %s |\n", name, err, load.LoadAverage())
			continue
		}
		r := load.RunHTTP(p.URL, v.impl, method, capConns, load.Options{Warmup: 500 * time.Millisecond, Duration: cfg.capDuration, CPU: p.CPU})
		p.Stop()
		if r.Err != nil {
			fmt.Fprintf(w, "| %s | failed: %v | | %s |\n", name, r.Err, load.LoadAverage())
			continue
		}
		capacity[name] = r.RPS()
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", name, num(r.RPS()), us(r.CPUPerRequest()), load.LoadAverage())
	}
	base := capacity[cfg.impls[0]]
	if base <= 0 {
		fmt.Fprintf(w, "\n%s's capacity is unknown: no open-loop runs.\n\n", cfg.impls[0])
		return []goalRow{{procs: cfg.procs, tool: tool, impl: cfg.impls[0]}}
	}
	fmt.Fprintf(w, "\nOpen loop at multiples of %s's capacity (%s/s), the same rates for every implementation:\n\n", cfg.impls[0], num(base))
	var runs []run
	for _, m := range cfg.multiples {
		for rep := 0; rep < cfg.reps; rep++ {
			for _, name := range cfg.impls {
				v := cfg.variant(name, tool)
				rn := run{v: v, multiple: m}
				p, err := cfg.start(v)
				if err != nil {
					rn.err = err
				} else {
					rn.r = load.RunOpenLoop(p.URL, v.impl, method, load.OpenLoop{
						Rate: m * base, Poisson: cfg.poisson, Warmup: cfg.warmup, Duration: cfg.duration,
						Timeout: cfg.timeout, MaxConns: cfg.maxConns, CPU: p.CPU, HostWait: p.RunqWait,
					})
					rn.rss, _ = p.PeakRSS()
					p.Stop()
				}
				rn.load = load.LoadAverage()
				fmt.Fprintf(os.Stderr, "benchoverload: GOMAXPROCS %d %s %s %gx: %s\n", cfg.procs, tool, name, m, summary(rn))
				runs = append(runs, rn)
			}
		}
	}
	fmt.Fprintln(w, "| impl | load | offered/s | goodput/s | shed (503)/s | errors | timeouts | client misses | p50 | p99 | max | p99 / p99 at 1x | 503 p50 | client send lag p99 | server CPU (cores) | withheld by the host (cores) | peak RSS | conns | load average |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	p99at1 := map[string]time.Duration{}
	for _, rn := range runs {
		if rn.multiple == 1 && rn.err == nil {
			p99at1[rn.v.name] = rn.r.P99
		}
	}
	var notes []string
	for _, name := range cfg.impls {
		for _, rn := range runs {
			if rn.v.name != name {
				continue
			}
			if rn.err != nil {
				fmt.Fprintf(w, "| %s | %gx | failed: %v | | | | | | | | | | | | | | | %s |\n", name, rn.multiple, rn.err, rn.load)
				continue
			}
			r := rn.r
			ratio := "-"
			if b := p99at1[name]; b > 0 && r.P99 > 0 {
				ratio = fmt.Sprintf("%.1f", float64(r.P99)/float64(b))
			}
			fmt.Fprintf(w, "| %s | %gx | %s | %s | %s | %d | %d | %d | %s | %s | %s | %s | %s | %s | %.2f | %.2f | %.0f MiB | %d | %s |\n",
				name, rn.multiple, num(r.PerSecond(r.Scheduled)), num(r.Goodput()), num(r.PerSecond(r.Shed)), r.Errors, r.Timeouts, r.Missed,
				ms(r.P50), ms(r.P99), ms(r.Max), ratio, ms(r.ShedP50), ms(r.SendLagP99), r.CPU.Seconds()/r.Elapsed.Seconds(), r.HostWait.Seconds()/r.Elapsed.Seconds(), float64(rn.rss)/(1<<20), r.Conns, rn.load)
			if r.FirstErr != nil {
				notes = append(notes, fmt.Sprintf("%s at %gx, first failure: %.300s", name, rn.multiple, r.FirstErr))
			}
		}
	}
	fmt.Fprintln(w)
	for _, n := range notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Own capacity: %s.\n\n", ownCapacity(cfg.impls, capacity))
	curve(w, cfg, runs)
	g := goalRow{procs: cfg.procs, tool: tool, impl: cfg.impls[0], capacity: base, goodput: map[float64][]float64{}, cores: map[float64][]float64{}, wait: map[float64][]float64{}}
	for _, rn := range runs {
		if rn.v.name == cfg.impls[0] && rn.err == nil {
			g.goodput[rn.multiple] = append(g.goodput[rn.multiple], rn.r.Goodput())
			g.cores[rn.multiple] = append(g.cores[rn.multiple], rn.r.CPU.Seconds()/rn.r.Elapsed.Seconds())
			g.wait[rn.multiple] = append(g.wait[rn.multiple], rn.r.HostWait.Seconds()/rn.r.Elapsed.Seconds())
		}
	}
	return []goalRow{g}
}

// goalRow is what the goal table (issue 24 item 9) needs of one pass: the
// first implementation's goodput at each multiple, every run.
type goalRow struct {
	procs      int
	tool, impl string
	capacity   float64 // closed loop
	goodput    map[float64][]float64
	cores      map[float64][]float64 // the server's CPU, in cores
	wait       map[float64][]float64 // the server's threads waiting for the host, in cores
}

// goals are the least goodput at 2x and 4x offered load, as a fraction of
// the goodput at 1x (issue 24 item 9).
var goals = map[float64]float64{2: 0.9, 4: 0.8}

// goalTable prints, per pass, the goodput at each multiple against the
// goodput at 1x (the goal's capacity: what the server serves when offered
// what it can take) and whether each goal is met, on the median of the
// runs; the spread of the runs shows how noisy the machine was.
func goalTable(w io.Writer, rows []goalRow) {
	fmt.Fprintln(w, "## Goals (issue 24 item 9)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Capacity is the goodput at 1x offered load (median of the runs; the closed-loop rate the multiples are")
	fmt.Fprintln(w, "of is shown for reference). Goal: goodput at 2x at least 90% of capacity, at 4x at least 80%.")
	fmt.Fprintln(w, "Each cell: median goodput/s (ratio to capacity; ratio to the closed loop) [every run], then the median")
	fmt.Fprintln(w, "CPU the server got and the CPU the host withheld from it (its threads ready to run but waiting on the")
	fmt.Fprintln(w, "host's run queues), both in cores, and the goodput per core of server CPU. When the two add up to about")
	fmt.Fprintln(w, "GOMAXPROCS, the server always had work and any shortfall is the host's (other processes took the")
	fmt.Fprintln(w, "CPU): that row measures the host, not the server. When they add up to less, the server sat idle")
	fmt.Fprintln(w, "(shedding too much, or offered too little). The goodput per core says whether the server's own work")
	fmt.Fprintln(w, "per answer grew (each 503 costs some).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| GOMAXPROCS | tool | impl | closed loop/s | 1x (capacity) | 2x | 4x | verdict |")
	fmt.Fprintln(w, "| ---: | --- | --- | ---: | --- | --- | --- | --- |")
	all := true
	for _, g := range rows {
		procs := "inherited"
		if g.procs > 0 {
			procs = strconv.Itoa(g.procs)
		}
		c := load.Median(g.goodput[1])
		cell := func(m float64) string {
			v := g.goodput[m]
			if len(v) == 0 {
				return "not run"
			}
			var each []string
			for _, x := range v {
				each = append(each, num(x))
			}
			r := "-"
			if c > 0 {
				r = fmt.Sprintf("%.2f", load.Median(v)/c)
			}
			if g.capacity > 0 {
				r += fmt.Sprintf("; %.2f", load.Median(v)/g.capacity)
			}
			cores := load.Median(g.cores[m])
			perCore := "-"
			if cores > 0 {
				perCore = num(load.Median(v) / cores)
			}
			return fmt.Sprintf("%s (%s) [%s], %.2f cores + %.2f withheld, %s/s per core", num(load.Median(v)), r, strings.Join(each, ", "), cores, load.Median(g.wait[m]), perCore)
		}
		var verdict []string
		for _, m := range []float64{2, 4} {
			v := g.goodput[m]
			switch {
			case len(v) == 0 || c <= 0:
				verdict = append(verdict, fmt.Sprintf("%gx UNKNOWN", m))
				all = false
			case load.Median(v)/c >= goals[m]:
				verdict = append(verdict, fmt.Sprintf("%gx PASS", m))
			default:
				verdict = append(verdict, fmt.Sprintf("%gx FAIL (< %.2f)", m, goals[m]))
				all = false
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", procs, g.tool, g.impl, num(g.capacity), cell(1), cell(2), cell(4), strings.Join(verdict, ", "))
	}
	fmt.Fprintln(w)
	if all {
		fmt.Fprintln(w, "All goals met.")
	} else {
		fmt.Fprintln(w, "Some goals NOT met (see the verdicts above).")
	}
	fmt.Fprintf(w, "\nLoad average at the end: %s.\n", load.LoadAverage())
}

func ownCapacity(impls []string, c map[string]float64) string {
	var parts []string
	for _, n := range impls {
		if v, ok := c[n]; ok {
			parts = append(parts, fmt.Sprintf("%s %s/s", n, num(v)))
		} else {
			parts = append(parts, n+" unknown")
		}
	}
	return strings.Join(parts, ", ")
}

// curve draws goodput (#) against the offered rate (.) and the p99 of each
// run as text.
func curve(w io.Writer, cfg config, runs []run) {
	var top float64
	for _, rn := range runs {
		top = max(top, rn.r.Rate)
	}
	if top <= 0 {
		return
	}
	const width = 40
	fmt.Fprintln(w, "```")
	fmt.Fprintf(w, "goodput (#) of offered (.), each bar up to %s/s; p99 of the answered requests\n", num(top))
	for _, name := range cfg.impls {
		for _, rn := range runs {
			if rn.v.name != name || rn.err != nil {
				continue
			}
			g := int(rn.r.Goodput() / top * width)
			o := int(rn.r.Rate / top * width)
			bar := strings.Repeat("#", g) + strings.Repeat(".", max(0, o-g)) + strings.Repeat(" ", max(0, width-max(o, g)))
			fmt.Fprintf(w, "%-12s %3gx |%s| %7s/s  p99 %s\n", name, rn.multiple, bar, num(rn.r.Goodput()), ms(rn.r.P99))
		}
	}
	fmt.Fprintln(w, "```")
	fmt.Fprintln(w)
}

func summary(rn run) string {
	if rn.err != nil {
		return "failed: " + rn.err.Error()
	}
	r := rn.r
	return fmt.Sprintf("offered %s/s, goodput %s/s, shed %d, errors %d, timeouts %d, missed %d, p50 %s, p99 %s, CPU %.2f + withheld %.2f cores, RSS %.0f MiB, load %s",
		num(r.PerSecond(r.Scheduled)), num(r.Goodput()), r.Shed, r.Errors, r.Timeouts, r.Missed, ms(r.P50), ms(r.P99),
		r.CPU.Seconds()/r.Elapsed.Seconds(), r.HostWait.Seconds()/r.Elapsed.Seconds(), float64(rn.rss)/(1<<20), rn.load)
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 0, 64)
	if len(s) > 3 {
		s = s[:len(s)-3] + "," + s[len(s)-3:]
	}
	return s
}

func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	if d < 10*time.Millisecond {
		return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(float64(d)/1e6, 'f', 0, 64) + " ms"
}

func us(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/1e3, 'f', 0, 64) + " µs"
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchoverload:", err)
	os.Exit(1)
}
