// Command benchall runs every benchmark of mcpkit side by side with go-sdk,
// mcp-go and the floors, and writes BENCHMARKS.md at the repository root.
//
//	cd bench && go run ./cmd/benchall        (or: bench/run.sh)
//
// Every implementation runs as its own benchserver process; the cases are
// interleaved (each case runs for every implementation before the next case
// starts, the order rotating between repetitions), repeated (-reps, at least
// 3 for the report), and summarised as medians with ranges and ratios to the
// floor. Every response is checked; an implementation that answers wrongly
// is reported as failing. A full run takes about nine minutes on two cores.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bench/load"
	"github.com/mcpkit/mcpkit/bench/servers"
)

type config struct {
	reps        int
	slices      int
	sliceWarmup time.Duration
	warmup      time.Duration
	duration    time.Duration
	benchtime   time.Duration
	levels      []int
	impls       []string
	transports  []string
	methods     []string
	inproc      bool
	listen      bool
	listenOnly  bool
	out         string
	profileDir  string
	command     string
	benchDir    string
}

func main() {
	testing.Init() // testing.Benchmark reads the test.* flags
	var c config
	var levels, impls, transports, methods string
	flag.IntVar(&c.reps, "reps", 3, "repetitions of every case")
	flag.DurationVar(&c.warmup, "warmup", 300*time.Millisecond, "unmeasured warm-up before the first slice of every run")
	flag.DurationVar(&c.duration, "duration", 2*time.Second, "measured time of every run (all its slices)")
	flag.IntVar(&c.slices, "slices", 4, "slices of every run; the implementations take turns slice by slice")
	flag.DurationVar(&c.sliceWarmup, "slice-warmup", 100*time.Millisecond, "unmeasured warm-up before every later slice")
	flag.DurationVar(&c.benchtime, "benchtime", 500*time.Millisecond, "time of every in-process benchmark")
	flag.StringVar(&levels, "levels", "1,16,64", "HTTP connections / stdio requests in flight")
	flag.StringVar(&impls, "impls", strings.Join(servers.Impls, ","), "implementations")
	flag.StringVar(&transports, "transports", "http,stdio", "transports")
	flag.StringVar(&methods, "methods", strings.Join(load.AllMethods, ","), "cases")
	flag.BoolVar(&c.inproc, "inproc", true, "run the in-process ServeHTTP benchmarks")
	flag.BoolVar(&c.listen, "listen", true, "run the subscriptions/listen cases (idle memory, notification fan-out)")
	flag.BoolVar(&c.listenOnly, "listen-only", false, "run only the subscriptions/listen cases (with -out -: a report of those alone)")
	flag.StringVar(&c.out, "out", "", "report file (default: BENCHMARKS.md at the repository root; - for stdout)")
	flag.StringVar(&c.profileDir, "profile", "", "write a CPU profile of every server process to this directory (allocations: go test -bench . -memprofile in load/)")
	flag.Parse()
	for f := range strings.SplitSeq(levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fatalf("bad -levels %q", levels)
		}
		c.levels = append(c.levels, n)
	}
	c.impls = splitList(impls, servers.Impls)
	c.transports = splitList(transports, []string{load.HTTP, load.Stdio})
	c.methods = splitList(methods, load.AllMethods)
	if err := flag.Set("test.benchtime", c.benchtime.String()); err != nil {
		fatalf("%v", err)
	}
	c.command = os.Getenv("BENCH_COMMAND")
	if c.command == "" {
		c.command = "cd bench && go run ./cmd/benchall"
		if len(os.Args) > 1 {
			c.command += " " + strings.Join(os.Args[1:], " ")
		}
	}

	benchDir, err := findBenchDir()
	if err != nil {
		fatalf("%v", err)
	}
	c.benchDir = benchDir
	if c.out == "" {
		c.out = filepath.Join(filepath.Dir(benchDir), "BENCHMARKS.md")
	}
	tmp, err := os.MkdirTemp("", "benchall")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(tmp)
	// One benchserver binary per implementation, holding only that
	// implementation's code, so that start times and memory compare
	// libraries rather than one binary that links all of them.
	bins := map[string]string{}
	for _, impl := range c.impls {
		bins[impl] = filepath.Join(tmp, "benchserver-"+impl)
		logf("building benchserver for %s", impl)
		build := exec.Command("go", "build", "-tags", "only_"+impl, "-o", bins[impl], "./cmd/benchserver")
		build.Dir = benchDir
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fatalf("building benchserver: %v", err)
		}
	}

	rep := run(&c, bins)
	text := render(&c, rep)
	if c.out == "-" {
		fmt.Print(text)
		return
	}
	text = keepHandWritten(c.out, text)
	if err := os.WriteFile(c.out, []byte(text), 0o644); err != nil {
		fatalf("%v", err)
	}
	logf("wrote %s", c.out)
}

// methodsFor returns the cases measured on transport: all of them, legacy
// tools/call last (it runs on fresh server processes).
func (c *config) methodsFor(transport string) []string {
	ms := slices.DeleteFunc(slices.Clone(c.methods), func(m string) bool { return m == load.LegacyCall })
	if slices.Contains(c.methods, load.LegacyCall) {
		ms = append(ms, load.LegacyCall)
	}
	return ms
}

// inprocMethods returns the cases measured in process: the modern ones.
func (c *config) inprocMethods() []string {
	return slices.DeleteFunc(slices.Clone(c.methods), func(m string) bool { return m == load.LegacyCall })
}

func splitList(s string, known []string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(known, f) {
			fatalf("unknown %q (known: %s)", f, strings.Join(known, ", "))
		}
		out = append(out, f)
	}
	return out
}

// findBenchDir returns the bench module's directory: the working directory
// or its bench subdirectory.
func findBenchDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for _, d := range []string{wd, filepath.Join(wd, "bench")} {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/mcpkit/mcpkit/bench\n") {
			return d, nil
		}
	}
	return "", fmt.Errorf("run benchall in the bench directory or the repository root")
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchall: "+format+"\n", args...)
	os.Exit(1)
}

// The results of a whole run.
type runKey struct {
	transport, method string
	level             int
	impl              string
}

type sample struct {
	rep       int
	rps       float64
	cpuPerReq time.Duration
	err       error
}

type procKey struct{ transport, impl string }

type procSample struct {
	firstDiscover time.Duration
	peakRSS       int64
	err           error
}

type inprocKey struct{ method, impl string }

type inprocSample struct {
	nsPerOp, allocsPerOp, bytesPerOp int64
	err                              error
}

type listenSample struct {
	mem load.IdleMemory
	err error
}

// fanoutSample is one fan-out, or the failure of a repetition's.
type fanoutSample struct {
	load.Fanout
	err error
}

type report struct {
	listen     map[string][]listenSample
	fanout     map[string][]fanoutSample
	start, end time.Time
	loadBefore string
	runs       map[runKey][]sample
	procs      map[procKey][]procSample
	starts     map[procKey][]time.Duration // start to first discover, every cold start
	inproc     map[inprocKey][]inprocSample
}

// coldStarts is how many more times every implementation is started, per
// transport and repetition, to time its start: one start is too noisy on
// a shared machine.
const coldStarts = 5

// rotate returns impls in the order of repetition r: A B C D, B C D A, ...
func rotate(impls []string, r int) []string {
	k := r % len(impls)
	return append(slices.Clone(impls[k:]), impls[:k]...)
}

func run(c *config, bins map[string]string) *report {
	rep := &report{
		start:      time.Now(),
		loadBefore: load.LoadAverage(),
		runs:       map[runKey][]sample{},
		procs:      map[procKey][]procSample{},
		starts:     map[procKey][]time.Duration{},
		inproc:     map[inprocKey][]inprocSample{},
		listen:     map[string][]listenSample{},
		fanout:     map[string][]fanoutSample{},
	}
	for r := range c.reps {
		order := rotate(c.impls, r)
		for _, transport := range c.transports {
			if c.listenOnly {
				break
			}
			logf("repetition %d/%d: %s", r+1, c.reps, transport)
			procs := map[string]*load.Proc{}
			for _, impl := range order {
				argv := []string{bins[impl]}
				if c.profileDir != "" {
					argv = append(argv, "-cpuprofile", filepath.Join(c.profileDir, fmt.Sprintf("%s-%s-rep%d.cpu.pprof", impl, transport, r+1)))
				}
				p, err := load.Start(argv, impl, transport)
				k := procKey{transport, impl}
				if err != nil {
					logf("  %s: %v", impl, err)
					rep.procs[k] = append(rep.procs[k], procSample{err: err})
					continue
				}
				procs[impl] = p
				rep.procs[k] = append(rep.procs[k], procSample{firstDiscover: p.FirstDiscover})
				rep.starts[k] = append(rep.starts[k], p.FirstDiscover)
			}
			for i := range coldStarts {
				for _, impl := range rotate(order, i+1) {
					p, err := load.Start([]string{bins[impl]}, impl, transport)
					if err != nil {
						continue // the start above reported it
					}
					k := procKey{transport, impl}
					rep.starts[k] = append(rep.starts[k], p.FirstDiscover)
					if err := p.Stop(); err != nil {
						logf("  %s: %v", impl, err)
					}
				}
			}
			for _, method := range c.methodsFor(transport) {
				ps := procs
				if method == load.LegacyCall {
					// Fresh processes: a stdio connection that spoke the
					// modern era may refuse initialize (go-sdk answers
					// "duplicate initialize"), and the peers serve legacy
					// HTTP clients only in their stateful mode.
					ps = map[string]*load.Proc{}
					for _, impl := range order {
						argv := []string{bins[impl]}
						if c.profileDir != "" {
							argv = append(argv, "-cpuprofile", filepath.Join(c.profileDir, fmt.Sprintf("%s-%s-legacy-rep%d.cpu.pprof", impl, transport, r+1)))
						}
						if p, err := load.StartLegacy(argv, impl, transport); err != nil {
							logf("  %s: %v", impl, err)
						} else {
							ps[impl] = p
						}
					}
				}
				for _, level := range c.levels {
					runCase(c, rep, r, transport, method, level, order, ps)
				}
				if method == load.LegacyCall {
					for _, p := range ps {
						if err := p.Stop(); err != nil {
							logf("  %v", err)
						}
					}
				}
			}
			for _, impl := range order {
				p := procs[impl]
				if p == nil {
					continue
				}
				k := procKey{transport, impl}
				ps := &rep.procs[k][len(rep.procs[k])-1]
				ps.peakRSS, ps.err = p.PeakRSS()
				if err := p.Stop(); err != nil {
					logf("  %s: %v", impl, err)
				}
			}
		}
		if (c.listen || c.listenOnly) && slices.Contains(c.transports, load.HTTP) {
			logf("repetition %d/%d: idle subscriptions/listen streams", r+1, c.reps)
			for _, impl := range order {
				b, err := load.IdleListenMemory([]string{bins[impl]}, impl, load.ListenStreams)
				rep.listen[impl] = append(rep.listen[impl], listenSample{mem: b, err: err})
				if err != nil {
					logf("  listen %-6s FAILED: %v", impl, err)
				} else {
					logf("  listen %-6s %6.1f KiB per idle stream past the first %d (%.1f KiB averaged over the first %d)", impl, float64(b.Marginal)/1024, load.ListenStreams, float64(b.Average)/1024, load.ListenStreams)
				}
			}
			logf("repetition %d/%d: notification fan-out to %d listeners", r+1, c.reps, load.FanoutListeners)
			for _, impl := range order {
				fs, err := load.MeasureFanout([]string{bins[impl]}, impl, load.FanoutListeners, load.FanoutTriggers)
				if err != nil {
					rep.fanout[impl] = append(rep.fanout[impl], fanoutSample{err: err})
					if !errors.Is(err, load.ErrNoFanout) {
						logf("  fan-out %-6s FAILED: %v", impl, err)
					}
					continue
				}
				for _, f := range fs {
					rep.fanout[impl] = append(rep.fanout[impl], fanoutSample{Fanout: f})
					logf("  fan-out %-6s %7.2f ms to all (first %6.2f ms), %6.1f ms server CPU", impl,
						float64(f.Latency.Microseconds())/1e3, float64(f.First.Microseconds())/1e3, float64(f.CPU.Microseconds())/1e3)
				}
			}
		}
		if c.inproc && !c.listenOnly {
			logf("repetition %d/%d: in-process ServeHTTP", r+1, c.reps)
			for _, method := range c.inprocMethods() {
				for _, impl := range order {
					k := inprocKey{method, impl}
					rep.inproc[k] = append(rep.inproc[k], benchInProcess(impl, method))
				}
			}
		}
	}
	rep.end = time.Now()
	return rep
}

// runCase measures one case (transport, method, level) for every
// implementation: each implementation's load is driven in c.slices slices,
// the implementations taking turns slice by slice, so that all of them
// share the same stretch of time on the shared machine.
func runCase(c *config, rep *report, r int, transport, method string, level int, order []string, procs map[string]*load.Proc) {
	drivers := map[string]*load.Driver{}
	results := map[string]*load.Result{}
	for _, impl := range order {
		results[impl] = &load.Result{}
		p := procs[impl]
		if p == nil {
			results[impl].Err = fmt.Errorf("the server did not start")
			continue
		}
		var d *load.Driver
		var err error
		if transport == load.HTTP {
			d, err = load.NewHTTPDriver(p.URL, impl, method, level, p.CPU)
		} else {
			d, err = p.Stdio.Driver(impl, method, level, p.CPU)
		}
		if err != nil {
			results[impl].Err = err
			continue
		}
		drivers[impl] = d
	}
	for s := range c.slices {
		warm := c.sliceWarmup
		if s == 0 {
			warm = c.warmup
		}
		for _, impl := range order {
			if d := drivers[impl]; d != nil {
				results[impl].Add(d.Measure(warm, c.duration/time.Duration(c.slices)))
			}
		}
	}
	for _, impl := range order {
		res := results[impl]
		if d := drivers[impl]; d != nil {
			if err := d.Close(); err != nil && res.Err == nil {
				res.Err = err
			}
		}
		if res.Err == nil && res.Requests == 0 {
			res.Err = fmt.Errorf("no response in the measured %s", c.duration)
		}
		k := runKey{transport, method, level, impl}
		smp := sample{rep: r, rps: res.RPS(), cpuPerReq: res.CPUPerRequest(), err: res.Err}
		rep.runs[k] = append(rep.runs[k], smp)
		status := ""
		if res.Err != nil {
			status = " FAILED: " + res.Err.Error()
		}
		logf("  %-5s %-15s %2d %-6s %9.0f req/s %7.1f us CPU/req%s", transport, method, level, impl, smp.rps, float64(smp.cpuPerReq.Nanoseconds())/1e3, status)
	}
}

func benchInProcess(impl, method string) inprocSample {
	p, err := load.NewInProcess(impl, method)
	if err != nil {
		return inprocSample{err: err}
	}
	var ferr error
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := p.Serve(); err != nil {
				ferr = err
				b.SkipNow()
			}
		}
	})
	if ferr != nil {
		return inprocSample{err: ferr}
	}
	logf("  inproc %-15s %-6s %9d ns/op %6d allocs/op %8d B/op", method, impl, res.NsPerOp(), res.AllocsPerOp(), res.AllocedBytesPerOp())
	return inprocSample{nsPerOp: res.NsPerOp(), allocsPerOp: res.AllocsPerOp(), bytesPerOp: res.AllocedBytesPerOp()}
}

// handWrittenMarker starts the part of the report file that a run keeps:
// sections written by hand from other commands (cmd/benchclients,
// cmd/benchscale, cmd/benchoverload) follow it.
const handWrittenMarker = "<!-- Hand-written sections follow: bench/run.sh keeps everything below this line. -->"

// keepHandWritten appends to text the part of the file at path from
// handWrittenMarker on, or the marker alone if the file has none.
func keepHandWritten(path, text string) string {
	old, err := os.ReadFile(path)
	if err != nil {
		return text + "\n" + handWrittenMarker + "\n"
	}
	i := strings.Index(string(old), handWrittenMarker)
	if i < 0 {
		return text + "\n" + handWrittenMarker + "\n"
	}
	return text + "\n" + string(old[i:])
}
