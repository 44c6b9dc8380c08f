package load

import (
	"fmt"
	"slices"
	"time"

	"github.com/mcpkit/mcpkit/bench/servers"
)

// ListenScale is one point of the listener curve: n idle
// subscriptions/listen streams on one server process.
type ListenScale struct {
	Streams int
	// RSSPerStream is the growth of the server's VmRSS from no stream to
	// Streams open streams, divided by Streams (bytes).
	RSSPerStream int64
	// IdleCPU is the server's CPU time over Idle with every stream open
	// and idle (keep-alive comments included), as a share of one core.
	IdleCPU float64
	Idle    time.Duration
	// P50, P99 and Max are the delivery times of notifications/tools/list_changed
	// to the streams, over every stream of every change: from sending the
	// tools/call of touch to the stream's reading the notification.
	P50, P99, Max time.Duration
	Changes       int
	// ChangeCPU is the server's CPU time per change (the tools/call of
	// touch and the fan-out), from the threads' schedstat: unlike the
	// delivery times, it hardly depends on what else the machine runs.
	ChangeCPU time.Duration
}

// MeasureListenScale starts a fresh server process (argv, as for Start,
// with -touch added) for impl, opens n listen streams on it, measures the
// memory they cost and the CPU the idle process spends over idle, and
// then triggers changes tool list changes one at a time, each checked to
// reach every stream exactly once within 30 s. The process is stopped
// when it returns: the run is bounded in count and time.
func MeasureListenScale(argv []string, impl string, n, changes int, idle time.Duration) (ListenScale, error) {
	out := ListenScale{Streams: n, Idle: idle, Changes: changes}
	if impl == servers.Floor {
		return out, ErrNoFanout
	}
	p, err := Start(append(slices.Clone(argv), "-touch"), impl, HTTP)
	if err != nil {
		return out, err
	}
	defer p.Stop()
	time.Sleep(100 * time.Millisecond)
	rss0, err := ProcRSS(p.Pid())
	if err != nil {
		return out, err
	}
	l, err := OpenListeners(p.URL, impl, n)
	if err != nil {
		return out, err
	}
	defer l.Close()
	time.Sleep(300 * time.Millisecond) // let the server settle
	rss1, err := ProcRSS(p.Pid())
	if err != nil {
		return out, err
	}
	out.RSSPerStream = (rss1 - rss0) / int64(n)

	cpu0, err := ProcCPUPrecise(p.Pid())
	if err != nil {
		return out, err
	}
	time.Sleep(idle)
	cpu1, err := ProcCPUPrecise(p.Pid())
	if err != nil {
		return out, err
	}
	out.IdleCPU = float64(cpu1-cpu0) / float64(idle)

	w := watchNotifications(l.streams)
	defer w.close() // before l.Close: the readers stop reporting
	toucher, err := newHTTPConnHeaders(p.URL, touchHeaders())
	if err != nil {
		return out, err
	}
	defer toucher.close()
	var delays []time.Duration
	var cpu time.Duration
	for k := range changes {
		cpu0, err := ProcCPUPrecise(p.Pid())
		if err != nil {
			return out, err
		}
		_, d, err := w.change(k+1, 30*time.Second, toucher.change(k+1))
		if err != nil {
			return out, fmt.Errorf("%s: %w", impl, err)
		}
		cpu1, err := ProcCPUPrecise(p.Pid())
		if err != nil {
			return out, err
		}
		cpu += cpu1 - cpu0
		delays = append(delays, d...)
		// Past the server's 10 ms change window; a second notification
		// for this change fails here.
		if err := w.quiet(200 * time.Millisecond); err != nil {
			return out, fmt.Errorf("%s: %w", impl, err)
		}
	}
	slices.Sort(delays)
	pct := func(q float64) time.Duration { return delays[min(len(delays)-1, int(q*float64(len(delays))))] }
	out.P50, out.P99, out.Max = pct(0.50), pct(0.99), delays[len(delays)-1]
	out.ChangeCPU = cpu / time.Duration(changes)
	return out, nil
}
