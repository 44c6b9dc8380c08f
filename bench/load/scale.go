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

	arrivals := make(chan arrival, 4*n)
	done := make(chan struct{})
	defer close(done)
	for _, s := range l.streams {
		go s.readNotifications(arrivals, done)
	}
	toucher, err := newHTTPConnHeaders(p.URL, touchHeaders())
	if err != nil {
		return out, err
	}
	defer toucher.close()
	var delays []time.Duration
	for k := range changes {
		t0 := time.Now()
		status, msg, err := toucher.do(touchBody(k + 1))
		if err == nil {
			err = checkTouch(status, msg, k+1)
		}
		if err != nil {
			return out, fmt.Errorf("%s: tools/call %s: %w", impl, servers.TouchTool, err)
		}
		got := make(map[int]bool, n)
		timeout := time.After(30 * time.Second)
		for len(got) < n {
			select {
			case a := <-arrivals:
				if a.err != nil {
					return out, fmt.Errorf("%s: listener %d: %w", impl, a.id, a.err)
				}
				if got[a.id] {
					return out, fmt.Errorf("%s: listener %d received two notifications for one change", impl, a.id)
				}
				got[a.id] = true
				delays = append(delays, a.at.Sub(t0))
			case <-timeout:
				return out, fmt.Errorf("%s: change %d: %d of %d listeners notified within 30s", impl, k+1, len(got), n)
			}
		}
		time.Sleep(200 * time.Millisecond) // past the server's 10 ms change window
	}
	slices.Sort(delays)
	pct := func(q float64) time.Duration { return delays[min(len(delays)-1, int(q*float64(len(delays))))] }
	out.P50, out.P99, out.Max = pct(0.50), pct(0.99), delays[len(delays)-1]
	return out, nil
}
