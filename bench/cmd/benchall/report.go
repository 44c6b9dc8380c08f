package main

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/bench/load"
	"github.com/mcpkit/mcpkit/bench/servers"
)

// Display names of the implementations.
var display = map[string]string{
	servers.Mcpkit: "mcpkit",
	servers.GoSDK:  "go-sdk",
	servers.McpGo:  "mcp-go",
	servers.Floor:  "floor",
}

var peers = []string{servers.GoSDK, servers.McpGo}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// stat is the summary of one measurement over the repetitions.
type stat struct {
	ok            bool // every repetition succeeded
	n, fails      int
	med, min, max float64
	err           error // the first failure
}

func summarize(xs []float64, errs []error) stat {
	st := stat{n: len(errs)}
	var good []float64
	for i, err := range errs {
		if err != nil {
			st.fails++
			if st.err == nil {
				st.err = err
			}
			continue
		}
		good = append(good, xs[i])
	}
	st.ok = st.n > 0 && st.fails == 0
	if len(good) > 0 {
		st.med = median(good)
		st.min, st.max = slices.Min(good), slices.Max(good)
	}
	return st
}

func (r *report) rps(k runKey) stat {
	var xs []float64
	var errs []error
	for _, s := range r.runs[k] {
		xs = append(xs, s.rps)
		errs = append(errs, s.err)
	}
	return summarize(xs, errs)
}

func (r *report) cpu(k runKey) stat {
	var xs []float64
	var errs []error
	for _, s := range r.runs[k] {
		xs = append(xs, float64(s.cpuPerReq.Nanoseconds())/1e3)
		errs = append(errs, s.err)
	}
	return summarize(xs, errs)
}

// ratio is the median over repetitions of impl's req/s divided by the
// floor's in the same repetition.
func (r *report) ratio(k runKey) (float64, bool) {
	fk := k
	fk.impl = servers.Floor
	floor := map[int]sample{}
	for _, s := range r.runs[fk] {
		floor[s.rep] = s
	}
	var xs []float64
	for _, s := range r.runs[k] {
		f, ok := floor[s.rep]
		if s.err != nil || !ok || f.err != nil || f.rps == 0 {
			return 0, false
		}
		xs = append(xs, s.rps/f.rps)
	}
	return median(xs), len(xs) > 0
}

func (r *report) procStat(k procKey, f func(procSample) float64) stat {
	var xs []float64
	var errs []error
	for _, s := range r.procs[k] {
		xs = append(xs, f(s))
		errs = append(errs, s.err)
	}
	return summarize(xs, errs)
}

// listenStat is the marginal memory per idle listen stream (KiB), and
// listenAvgStat the average over the first batch.
// startStat is the start to first server/discover (ms) over every start
// of impl on a transport: the load's process and the cold starts.
func (r *report) startStat(k procKey) stat {
	ds := r.starts[k]
	if len(ds) == 0 { // reports built without cold starts
		for _, s := range r.procs[k] {
			if s.err == nil {
				ds = append(ds, s.firstDiscover)
			}
		}
	}
	var xs []float64
	var errs []error
	for _, d := range ds {
		xs = append(xs, float64(d.Microseconds())/1e3)
		errs = append(errs, nil)
	}
	for _, s := range r.procs[k] {
		if s.err != nil {
			errs = append(errs, s.err)
		}
	}
	return summarize(xs, errs)
}

func (r *report) listenStat(impl string) stat {
	return r.listenMem(impl, func(m load.IdleMemory) int64 { return m.Marginal })
}

func (r *report) listenAvgStat(impl string) stat {
	return r.listenMem(impl, func(m load.IdleMemory) int64 { return m.Average })
}

func (r *report) listenMem(impl string, f func(load.IdleMemory) int64) stat {
	var xs []float64
	var errs []error
	for _, s := range r.listen[impl] {
		xs = append(xs, float64(f(s.mem))/1024)
		errs = append(errs, s.err)
	}
	return summarize(xs, errs)
}

func (r *report) fanoutStat(impl string, f func(load.Fanout) float64) stat {
	var xs []float64
	var errs []error
	for _, s := range r.fanout[impl] {
		xs = append(xs, f(s.Fanout))
		errs = append(errs, s.err)
	}
	return summarize(xs, errs)
}

func fanoutAll(f load.Fanout) float64   { return float64(f.Latency.Microseconds()) / 1e3 }
func fanoutFirst(f load.Fanout) float64 { return float64(f.First.Microseconds()) / 1e3 }
func fanoutCPU(f load.Fanout) float64   { return float64(f.CPU.Microseconds()) / 1e3 }
func fanoutSpread(f load.Fanout) float64 {
	return float64((f.Latency - f.First).Microseconds()) / 1e3
}

// renderFanout writes the notification fan-out section. A peer (or the
// floor) that cannot fan out is "not available", with its reason; a failure
// of mcpkit is a failure.
func (r *report) renderFanout(c *config, p func(string, ...any)) {
	if len(r.fanout) == 0 {
		return
	}
	p("## Notification fan-out to %s `subscriptions/listen` listeners\n\n", thousands(load.FanoutListeners))
	p("A fresh server process per implementation and repetition, started with one more tool, `%s`, whose every call adds the tool `%s` or removes it ", servers.TouchTool, servers.TransientTool)
	p("(one tools list change per call, made with the library's own add/remove-tool API, which publishes `notifications/tools/list_changed`). ")
	p("%s listen streams (HTTP, one connection each, subscribed to tools list changes, each acknowledgment checked), then %d changes one after another, ", thousands(load.FanoutListeners), load.FanoutTriggers)
	p("each triggered by a `tools/call` of `%s` on another connection. ", servers.TouchTool)
	p("Every listener must receive exactly one `notifications/tools/list_changed` per change, tagged with its own `io.modelcontextprotocol/subscriptionId`. ")
	p("Time: from sending the `tools/call` until the last (first) listener received its notification, read by the harness on the same two cores. ")
	p("The time to the first listener includes any delay a library adds before it publishes: go-sdk waits 10 ms for more registrations, so that a burst of changes ")
	p("becomes one notification; mcp-go publishes at once; mcpkit publishes a change after a quiet spell at once and gathers those made within the next 10 ms into one more notification. ")
	p("The spread from the first to the last listener is the fan-out itself. ")
	p("Server CPU: the CPU time of the server process's threads over the same span (`/proc/PID/task/*/schedstat`, nanoseconds), the `touch` call included. ")
	p("Cells are median <sub>(min–max)</sub> over all changes of all repetitions.\n\n")
	r.header(c, p, "")
	var notes []string
	fcell := func(impl string, f func(load.Fanout) float64, prec int) string {
		st := r.fanoutStat(impl, f)
		if st.ok || st.n == 0 || impl == servers.Mcpkit {
			return cell(st, prec, "")
		}
		return "not available"
	}
	for _, row := range []struct {
		name string
		f    func(load.Fanout) float64
		prec int
	}{
		{"time to all listeners (ms)", fanoutAll, 2},
		{"time to the first listener (ms)", fanoutFirst, 2},
		{"spread, first to last listener (ms)", fanoutSpread, 2},
		{"server CPU per change (ms)", fanoutCPU, 2},
	} {
		p("| %s |", row.name)
		for _, impl := range c.impls {
			p(" %s |", fcell(impl, row.f, row.prec))
		}
		p("\n")
	}
	for _, impl := range c.impls {
		if st := r.fanoutStat(impl, fanoutAll); !st.ok && st.err != nil && impl != servers.Mcpkit {
			notes = append(notes, fmt.Sprintf("- %s: not available: %s", display[impl], oneLine(st.err)))
		}
	}
	p("\n")
	if len(notes) > 0 {
		p("%s\n\n", strings.Join(notes, "\n"))
	}
}

func (r *report) inprocStat(k inprocKey, f func(inprocSample) float64) stat {
	var xs []float64
	var errs []error
	for _, s := range r.inproc[k] {
		xs = append(xs, f(s))
		errs = append(errs, s.err)
	}
	return summarize(xs, errs)
}

func thousands(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtNum(v float64, prec int) string {
	if prec == 0 {
		return thousands(v)
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// cell renders a stat as "median (min–max)", or FAIL.
func cell(st stat, prec int, unit string) string {
	if st.n == 0 {
		return "–"
	}
	if !st.ok {
		return fmt.Sprintf("**FAIL** (%d/%d)", st.fails, st.n)
	}
	s := fmtNum(st.med, prec) + unit
	if st.n > 1 {
		s += fmt.Sprintf(" <sub>(%s–%s)</sub>", fmtNum(st.min, prec), fmtNum(st.max, prec))
	}
	return s
}

func render(c *config, r *report) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("# Benchmarks\n\n")
	p("mcpkit side by side with the official go-sdk and with mcp-go, serving the same small server, and with two floors that do no MCP work. ")
	p("Generated by one run of the command below, up to the hand-written sections at the end (which a run keeps); do not edit the generated part by hand, rerun it.\n\n")
	p("```\n%s\n```\n\n", c.command)
	p("## Machine and run\n\n")
	p("| | |\n|---|---|\n")
	p("| Date | %s (run took %s) |\n", r.start.UTC().Format("2006-01-02 15:04 MST"), r.end.Sub(r.start).Round(time.Second))
	p("| CPU | %s, nproc %d, GOMAXPROCS %d |\n", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0))
	p("| OS | %s %s, kernel %s |\n", runtime.GOOS, runtime.GOARCH, kernel())
	p("| Go | %s |\n", runtime.Version())
	p("| mcpkit | commit %s |\n", gitRev(c.benchDir))
	p("| Load average | %s before, %s after (the machine is shared; numbers are noisy) |\n", r.loadBefore, load.LoadAverage())
	p("| Repetitions | %d, interleaved: each case runs for every implementation before the next case, in an order that rotates between repetitions |\n", c.reps)
	p("| Per run | %s measured in %d slices: the implementations take turns slice by slice (%s warm-up before the first, %s before the others); in-process benchmarks %s each |\n", c.duration, c.slices, c.warmup, c.sliceWarmup, c.benchtime)
	p("\nImplementations:\n\n")
	for _, impl := range c.impls {
		p("- **%s**: %s\n", display[impl], servers.Describe(impl))
	}
	p("\nEvery implementation serves: name `%s`, version `%s`, instructions, `server/discover` with `ttlMs` one hour and `cacheScope` public, ", servers.Name, servers.Version)
	p("and one tool `echo` whose `{\"text\": string}` input is validated against its schema and whose result is the text as one text content item. ")
	p("Every request is a 2026-07-28 request as the conformance harness sends it (`_meta` with protocol version, client info and capabilities; ")
	p("on HTTP the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers). All three libraries answer `server/discover` at 2026-07-28. ")
	p("Every response is checked before it counts: the first one of every run field by field, the others byte for byte against it with the id spliced in ")
	p("(a response that differs is checked field by field); a run with a wrong answer is reported as **FAIL**, not as a speed. ")
	p("The HTTP floor must send its fixed body, the stdio floor must echo the request line.\n\n")
	p("Cells are median <sub>(min–max)</sub> over the repetitions; `×floor` is the median over repetitions of the ratio to the floor's run in the same repetition.\n\n")

	r.renderTargets(c, p)
	r.renderAhead(c, p)

	for _, transport := range c.transports {
		title, unit := "Streamable HTTP: keep-alive connections, closed loop", "connections"
		if transport == load.Stdio {
			title, unit = "stdio: one process, requests pipelined", "in flight"
		}
		p("## %s\n\n", title)
		for _, method := range c.methodsFor(transport) {
			p("### `%s`, requests per second\n\n", method)
			r.header(c, p, unit)
			for _, level := range c.levels {
				p("| %d |", level)
				for _, impl := range c.impls {
					k := runKey{transport, method, level, impl}
					st := r.rps(k)
					s := cell(st, 0, "")
					if ratio, ok := r.ratio(k); ok && impl != servers.Floor {
						s += fmt.Sprintf(" · **%.2f×**", ratio)
					}
					p(" %s |", s)
				}
				p("\n")
			}
			p("\n")
		}
		p("### Server CPU time per request (µs, user+system of the server process)\n\n")
		r.header(c, p, "case")
		for _, method := range c.methodsFor(transport) {
			for _, level := range c.levels {
				p("| `%s` ×%d |", method, level)
				for _, impl := range c.impls {
					p(" %s |", cell(r.cpu(runKey{transport, method, level, impl}), 1, ""))
				}
				p("\n")
			}
		}
		p("\n")
	}

	p("## Processes\n\n")
	p("Start to first `server/discover`: from starting the process to the first answered (and checked) `server/discover`, ")
	p("including the runtime's start and, on HTTP, listening and printing the URL, over %d starts per implementation, transport and repetition (the process the load then runs on, and %d cold starts, the implementations taking turns). Peak RSS: `VmHWM` after all cases of a repetition ran.\n\n", coldStarts+1, coldStarts)
	r.header(c, p, "")
	for _, transport := range c.transports {
		p("| start to first discover, %s (ms) |", transport)
		for _, impl := range c.impls {
			p(" %s |", cell(r.startStat(procKey{transport, impl}), 1, ""))
		}
		p("\n")
	}
	for _, transport := range c.transports {
		p("| peak RSS, %s (MiB) |", transport)
		for _, impl := range c.impls {
			p(" %s |", cell(r.procStat(procKey{transport, impl}, func(s procSample) float64 { return float64(s.peakRSS) / (1 << 20) }), 1, ""))
		}
		p("\n")
	}
	p("\n")

	if c.inproc {
		p("## In-process `ServeHTTP`\n\n")
		p("The handler called directly with a reused request and response writer (so the harness allocates nothing), on a loopback context so that DNS-rebinding checks run. ")
		p("`+N` is beyond the floor.\n\n")
		r.header(c, p, "")
		for _, method := range c.inprocMethods() {
			fl := inprocKey{method, servers.Floor}
			fa := r.inprocStat(fl, func(s inprocSample) float64 { return float64(s.allocsPerOp) })
			fb := r.inprocStat(fl, func(s inprocSample) float64 { return float64(s.bytesPerOp) })
			for _, what := range []string{"ns/op", "allocs/op", "B/op"} {
				p("| `%s` %s |", method, what)
				for _, impl := range c.impls {
					k := inprocKey{method, impl}
					var st stat
					var extra string
					switch what {
					case "ns/op":
						st = r.inprocStat(k, func(s inprocSample) float64 { return float64(s.nsPerOp) })
					case "allocs/op":
						st = r.inprocStat(k, func(s inprocSample) float64 { return float64(s.allocsPerOp) })
						if st.ok && fa.ok && impl != servers.Floor {
							extra = fmt.Sprintf(" (+%s)", thousands(st.med-fa.med))
						}
					case "B/op":
						st = r.inprocStat(k, func(s inprocSample) float64 { return float64(s.bytesPerOp) })
						if st.ok && fb.ok && impl != servers.Floor {
							extra = fmt.Sprintf(" (+%s)", thousands(st.med-fb.med))
						}
					}
					p(" %s%s |", cell(st, 0, ""), extra)
				}
				p("\n")
			}
		}
		p("\n")
	}

	if len(r.listen) > 0 {
		p("## Idle `subscriptions/listen` streams\n\n")
		p("A fresh server process per implementation and repetition; %d listen streams (HTTP, one connection each, subscribed to tools list changes), ", load.ListenStreams)
		p("each acknowledgment checked, then %d more the same way. ", load.ListenStreams)
		p("**Per stream** is the growth of the process's resident memory (`VmRSS`) from the first %d streams to all %d, divided by %d: what one more idle stream costs. ", load.ListenStreams, 2*load.ListenStreams, load.ListenStreams)
		p("**Averaged over the first %d** is the growth from no stream to %d, divided by %d: the same cost plus what the process spends once (the Go runtime keeps a heap of at least 4 MB, whatever the first connections allocated), spread over the streams. ", load.ListenStreams, load.ListenStreams, load.ListenStreams)
		p("The floor holds each stream with a net/http handler blocked on the request's context.\n\n")
		r.header(c, p, "")
		p("| memory per idle stream (KiB) |")
		for _, impl := range c.impls {
			p(" %s |", cell(r.listenStat(impl), 1, ""))
		}
		p("\n| averaged over the first %d streams (KiB) |", load.ListenStreams)
		for _, impl := range c.impls {
			p(" %s |", cell(r.listenAvgStat(impl), 1, ""))
		}
		p("\n\n")
	}

	r.renderFanout(c, p)

	r.renderFailures(c, p)

	return b.String()
}

func (r *report) header(c *config, p func(string, ...any), first string) {
	p("| %s |", first)
	for _, impl := range c.impls {
		p(" %s |", display[impl])
	}
	p("\n|---|")
	for range c.impls {
		p("---:|")
	}
	p("\n")
}

// renderTargets checks mcpkit against the targets of issues 2, 3, 6, 8 and 20.
func (r *report) renderTargets(c *config, p func(string, ...any)) {
	type row struct{ target, measured, verdict string }
	var rows []row
	verdict := func(ok, known bool) string {
		switch {
		case !known:
			return "not measured"
		case ok:
			return "met"
		}
		return "**not met**"
	}
	ratioRow := func(transport, method string, level int, min float64, label string) {
		k := runKey{transport, method, level, servers.Mcpkit}
		ratio, ok := r.ratio(k)
		m := "–"
		if ok {
			m = fmt.Sprintf("%.2f× (%s vs %s req/s)", ratio, thousands(r.rps(k).med), thousands(r.rps(runKey{transport, method, level, servers.Floor}).med))
		} else if st := r.rps(k); st.n > 0 && !st.ok {
			m = "FAIL"
			ok = true
			ratio = -1
		}
		rows = append(rows, row{label, m, verdict(ratio >= min, ok)})
	}
	ratioRow(load.HTTP, load.Discover, 16, 0.8, "HTTP `server/discover` ≥ 0.8× the floor at 16 connections")
	ratioRow(load.HTTP, load.Call, 16, 0.6, "HTTP `tools/call` ≥ 0.6× the floor at 16 connections")
	ratioRow(load.Stdio, load.Discover, 64, 0.3, "stdio `server/discover` ≥ 0.3× the floor at 64 in flight")
	ratioRow(load.HTTP, load.LegacyCall, 16, 0.85, "HTTP `legacy tools/call` ≥ 0.85× the floor at 16 connections (issue 20)")
	ratioRow(load.Stdio, load.Discover, 64, 0.8, "stdio `server/discover` ≥ 0.8× the floor at 64 in flight (issue 20)")
	inRow := func(method string, maxAllocs, maxBytes float64, label string) {
		a := r.inprocStat(inprocKey{method, servers.Mcpkit}, func(s inprocSample) float64 { return float64(s.allocsPerOp) })
		bb := r.inprocStat(inprocKey{method, servers.Mcpkit}, func(s inprocSample) float64 { return float64(s.bytesPerOp) })
		fa := r.inprocStat(inprocKey{method, servers.Floor}, func(s inprocSample) float64 { return float64(s.allocsPerOp) })
		fb := r.inprocStat(inprocKey{method, servers.Floor}, func(s inprocSample) float64 { return float64(s.bytesPerOp) })
		known := a.ok && bb.ok && fa.ok && fb.ok
		m := "–"
		if known {
			m = fmt.Sprintf("+%s allocs, +%s B", thousands(a.med-fa.med), thousands(bb.med-fb.med))
		}
		rows = append(rows, row{label, m, verdict(a.med-fa.med <= maxAllocs && bb.med-fb.med <= maxBytes, known)})
	}
	inRow(load.Discover, 6, 2048, "in-process `server/discover` ≤ 6 allocations and 2 KB beyond the floor")
	inRow(load.Call, 30, 4096, "in-process `tools/call` ≤ 30 allocations and 4 KB beyond the floor")
	cpu := r.cpu(runKey{load.HTTP, load.Discover, 16, servers.Mcpkit})
	m := "–"
	if cpu.ok {
		m = fmt.Sprintf("%.1f µs (HTTP, 16 connections)", cpu.med)
	}
	rows = append(rows, row{"server CPU per `server/discover` ≤ 20 µs", m, verdict(cpu.med <= 20, cpu.ok)})
	for _, transport := range c.transports {
		st := r.startStat(procKey{transport, servers.Mcpkit})
		m := "–"
		if st.ok {
			m = fmt.Sprintf("%.1f ms", st.med)
		}
		rows = append(rows, row{"start to first `server/discover` < 20 ms (" + transport + ")", m, verdict(st.med < 20, st.ok)})
	}
	nsRow := func(method string, max float64, label string) {
		a := r.inprocStat(inprocKey{method, servers.Mcpkit}, func(s inprocSample) float64 { return float64(s.nsPerOp) })
		f := r.inprocStat(inprocKey{method, servers.Floor}, func(s inprocSample) float64 { return float64(s.nsPerOp) })
		m := "–"
		if a.ok && f.ok {
			m = fmt.Sprintf("%.1f× (%s vs %s ns/op)", a.med/f.med, thousands(a.med), thousands(f.med))
		}
		rows = append(rows, row{label, m, verdict(a.med <= max*f.med, a.ok && f.ok)})
	}
	nsRow(load.Discover, 2, "in-process `server/discover` within 2× the floor's ns/op (issue 2)")
	nsRow(load.Call, 3, "in-process `tools/call` within 3× the floor's ns/op (issue 3)")
	if len(r.listen) > 0 {
		st, avg := r.listenStat(servers.Mcpkit), r.listenAvgStat(servers.Mcpkit)
		m := "–"
		if st.ok && avg.ok {
			m = fmt.Sprintf("%.1f KiB per stream (%.1f KiB averaged over the first %d, with the process's fixed costs)", st.med, avg.med, load.ListenStreams)
		}
		rows = append(rows, row{"idle `subscriptions/listen` stream ≤ 8 KB (issue 6)", m, verdict(st.med*1024 <= 8000, st.ok)})
	}
	p("## Targets (issues 2, 3, 6, 8 and 20), mcpkit in this run\n\n| target | measured (median) | |\n|---|---|---|\n")
	for _, rw := range rows {
		p("| %s | %s | %s |\n", rw.target, rw.measured, rw.verdict)
	}
	p("\nWhat stands in the way of a target that is not met, with profiles and measured fixes: [bench/NOTES.md](bench/NOTES.md).\n\n")
}

// renderAhead says, case by case, whether mcpkit beat both peers.
func (r *report) renderAhead(c *config, p func(string, ...any)) {
	if !slices.Contains(c.impls, servers.Mcpkit) || !slices.ContainsFunc(peers, func(peer string) bool { return slices.Contains(c.impls, peer) }) {
		return
	}
	var behind []string
	total := 0
	compare := func(name string, get func(impl string) stat, higherIsBetter bool, format func(float64) string) {
		total++
		m := get(servers.Mcpkit)
		if !m.ok {
			behind = append(behind, name+": mcpkit FAILS")
			return
		}
		for _, peer := range peers {
			if !slices.Contains(c.impls, peer) {
				continue
			}
			ps := get(peer)
			if !ps.ok {
				continue // a failing peer is behind
			}
			if (higherIsBetter && ps.med >= m.med) || (!higherIsBetter && ps.med <= m.med) {
				behind = append(behind, fmt.Sprintf("%s: %s %s vs mcpkit %s", name, display[peer], format(ps.med), format(m.med)))
			}
		}
	}
	for _, transport := range c.transports {
		for _, method := range c.methodsFor(transport) {
			for _, level := range c.levels {
				compare(fmt.Sprintf("%s `%s` ×%d req/s", transport, method, level), func(impl string) stat { return r.rps(runKey{transport, method, level, impl}) }, true, unit(0, " req/s"))
				compare(fmt.Sprintf("%s `%s` ×%d CPU/req", transport, method, level), func(impl string) stat { return r.cpu(runKey{transport, method, level, impl}) }, false, unit(1, " µs"))
			}
		}
		compare(transport+" start to first discover", func(impl string) stat {
			return r.startStat(procKey{transport, impl})
		}, false, unit(1, " ms"))
		compare(transport+" peak RSS", func(impl string) stat {
			return r.procStat(procKey{transport, impl}, func(s procSample) float64 { return float64(s.peakRSS) / (1 << 20) })
		}, false, unit(1, " MiB"))
	}
	if len(r.listen) > 0 {
		compare("memory per idle listen stream", r.listenStat, false, unit(1, " KiB"))
		compare("memory per idle listen stream, averaged over the first streams", r.listenAvgStat, false, unit(1, " KiB"))
	}
	if len(r.fanout) > 0 {
		compare("fan-out time to all listeners", func(impl string) stat { return r.fanoutStat(impl, fanoutAll) }, false, unit(2, " ms"))
		compare("fan-out spread, first to last listener", func(impl string) stat { return r.fanoutStat(impl, fanoutSpread) }, false, unit(2, " ms"))
		compare("fan-out server CPU per change", func(impl string) stat { return r.fanoutStat(impl, fanoutCPU) }, false, unit(2, " ms"))
	}
	if c.inproc {
		for _, method := range c.inprocMethods() {
			compare(fmt.Sprintf("in-process `%s` allocs/op", method), func(impl string) stat {
				return r.inprocStat(inprocKey{method, impl}, func(s inprocSample) float64 { return float64(s.allocsPerOp) })
			}, false, unit(0, ""))
			compare(fmt.Sprintf("in-process `%s` B/op", method), func(impl string) stat {
				return r.inprocStat(inprocKey{method, impl}, func(s inprocSample) float64 { return float64(s.bytesPerOp) })
			}, false, unit(0, " B"))
			compare(fmt.Sprintf("in-process `%s` ns/op", method), func(impl string) stat {
				return r.inprocStat(inprocKey{method, impl}, func(s inprocSample) float64 { return float64(s.nsPerOp) })
			}, false, unit(0, " ns"))
		}
	}
	p("## mcpkit against the peers\n\n")
	if len(behind) == 0 {
		p("mcpkit is ahead of both go-sdk and mcp-go in all %d comparisons (every case and level: req/s, server CPU per request, start time, peak RSS, idle listen memory, listen fan-out, in-process ns, allocations and bytes).\n\n", total)
		return
	}
	p("mcpkit is ahead of both peers in %d of %d comparisons. Not ahead in:\n\n", total-len(behind), total)
	for _, s := range behind {
		p("- %s\n", s)
	}
	p("\n")
}

// unit formats a number with prec decimals and a unit suffix.
func unit(prec int, suffix string) func(float64) string {
	return func(v float64) string { return fmtNum(v, prec) + suffix }
}

func (r *report) renderFailures(c *config, p func(string, ...any)) {
	var lines []string
	keys := make([]runKey, 0, len(r.runs))
	for k := range r.runs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b runKey) int {
		return cmp.Or(cmp.Compare(a.transport, b.transport), cmp.Compare(a.method, b.method), cmp.Compare(a.level, b.level), cmp.Compare(a.impl, b.impl))
	})
	for _, k := range keys {
		if st := r.rps(k); st.err != nil {
			lines = append(lines, fmt.Sprintf("- %s %s `%s` ×%d (%d of %d runs): %s", display[k.impl], k.transport, k.method, k.level, st.fails, st.n, oneLine(st.err)))
		}
	}
	for _, transport := range c.transports {
		for _, impl := range c.impls {
			if st := r.procStat(procKey{transport, impl}, func(procSample) float64 { return 0 }); st.err != nil {
				lines = append(lines, fmt.Sprintf("- %s %s process: %s", display[impl], transport, oneLine(st.err)))
			}
		}
	}
	for _, method := range c.inprocMethods() {
		for _, impl := range c.impls {
			if st := r.inprocStat(inprocKey{method, impl}, func(inprocSample) float64 { return 0 }); st.err != nil {
				lines = append(lines, fmt.Sprintf("- %s in-process `%s`: %s", display[impl], method, oneLine(st.err)))
			}
		}
	}
	for _, impl := range c.impls {
		if st := r.listenStat(impl); st.err != nil {
			lines = append(lines, fmt.Sprintf("- %s idle listen streams: %s", display[impl], oneLine(st.err)))
		}
	}
	// Only mcpkit's fan-out can fail: a peer that cannot fan out is "not
	// available" in its section.
	if st := r.fanoutStat(servers.Mcpkit, fanoutAll); st.err != nil {
		lines = append(lines, fmt.Sprintf("- mcpkit listen fan-out (%d of %d): %s", st.fails, st.n, oneLine(st.err)))
	}
	p("## Failures\n\n")
	if len(lines) == 0 {
		p("None: every response of every run was correct.\n\n")
		return
	}
	p("%s\n\n", strings.Join(lines, "\n"))
}

func oneLine(err error) string {
	s := strings.ReplaceAll(err.Error(), "\n", " ")
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

func gitRev(dir string) string {
	cmd := exec.Command("git", "rev-parse", "--short", "HEAD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	rev := strings.TrimSpace(string(out))
	st := exec.Command("git", "status", "--porcelain", "--untracked-files=no")
	st.Dir = dir
	if st, err := st.Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		rev += " (with uncommitted changes)"
	}
	return rev
}
