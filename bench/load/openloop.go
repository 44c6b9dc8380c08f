package load

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"time"
)

// OpenLoop is the timing and shape of one open-loop run: requests are sent
// on a fixed arrival schedule, whatever the answers, so that a server that
// falls behind sees the load it would see from many independent clients
// (a closed loop slows down with the server and hides its queueing).
type OpenLoop struct {
	// Rate is the offered load, in requests per second.
	Rate float64
	// Poisson spaces the arrivals by exponential gaps of mean 1/Rate (a
	// fixed seed, so runs are repeatable); otherwise they are evenly
	// spaced.
	Poisson bool
	// Warmup is sent at Rate before the measured part and not counted.
	Warmup time.Duration
	// Duration is the measured part of the schedule.
	Duration time.Duration
	// Timeout bounds each request from its scheduled send time; a request
	// not answered by then counts as a timeout. Default 5 s.
	Timeout time.Duration
	// MaxConns caps the keep-alive connections (one request at a time
	// each). A request whose send time comes while every connection is
	// busy and the cap is reached is a client-side miss: counted, never
	// sent. Default 4096.
	MaxConns int
	// CPU, when set, reports the server's CPU time so far; it is read at
	// the start and at the end of the measured part.
	CPU func() (time.Duration, error)
	// HostWait, when set, reports the time the server's threads have
	// waited for a CPU of the host so far; read like CPU.
	HostWait func() (time.Duration, error)
}

// OpenLoopResult is what one open-loop run measured. Every request
// scheduled in the measured part is counted exactly once: OK, Shed,
// Errors, Timeouts or Missed.
type OpenLoopResult struct {
	Rate      float64       // offered, requests per second
	Elapsed   time.Duration // the measured part of the schedule
	Scheduled int64
	// OK counts the correct answers (each checked like every response of
	// the closed-loop runs); Goodput is OK per second.
	OK int64
	// Shed counts the HTTP 503 answers with Retry-After.
	Shed int64
	// Errors counts everything else: another status (or a 503 without
	// Retry-After), a wrong answer, a transport error.
	Errors int64
	// Timeouts counts the requests not answered within Timeout.
	Timeouts int64
	// Missed counts the requests the client could not send on time (every
	// connection busy, at the cap).
	Missed int64
	// P50, P99 and Max are the latencies of the OK answers, from each
	// request's scheduled send time (so that a late send is counted as
	// latency: no coordinated omission).
	P50, P99, Max time.Duration
	// ShedP50 and ShedP99 are the latencies of the 503 answers.
	ShedP50, ShedP99 time.Duration
	// SendLagP99 is how late the client sent its requests (p99): the
	// client's own share of the latency when the machine is busy.
	SendLagP99 time.Duration
	// Conns is the most connections open at once.
	Conns int
	// CPU is the server's CPU time during the measured part (0: not
	// measured).
	CPU time.Duration
	// HostWait is the time the server's threads waited for a CPU of the
	// host during the measured part, ready to run (0: not measured): CPU
	// plus HostWait below the server's CPUs means it had nothing to run.
	HostWait time.Duration
	// FirstErr describes the first error (or, when there was none, the
	// first timeout), for the report.
	FirstErr error
}

// Goodput returns the correct answers per second.
func (r OpenLoopResult) Goodput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// PerSecond returns n per second of the measured part.
func (r OpenLoopResult) PerSecond(n int64) float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(n) / r.Elapsed.Seconds()
}

// connPool is the open-loop client's keep-alive connections: a stack, so
// that the fewest connections stay in use.
type connPool struct {
	mu    sync.Mutex
	idle  []*httpConn
	open  int
	peak  int
	max   int
	url   string
	hdrs  [][2]string
	every []*httpConn
}

// get returns an idle connection, or a new one while under the cap, or nil.
func (p *connPool) get() (*httpConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return c, nil
	}
	if p.open >= p.max {
		return nil, nil
	}
	c, err := newHTTPConnHeaders(p.url, p.hdrs)
	if err != nil {
		return nil, err
	}
	p.open++
	p.peak = max(p.peak, p.open)
	p.every = append(p.every, c)
	return c, nil
}

func (p *connPool) put(c *httpConn) {
	p.mu.Lock()
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

func (p *connPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.every {
		c.close()
	}
}

// outcome kinds of one request.
const (
	outOK = iota
	outShed
	outError
	outTimeout
)

// RunOpenLoop sends method requests to the MCP endpoint at url on the
// schedule o describes and checks every answer of impl. It first checks
// one response deeply (the golden response of the case); it returns when
// every request sent has been answered or has timed out.
func RunOpenLoop(url, impl, method string, o OpenLoop) OpenLoopResult {
	res := OpenLoopResult{Rate: o.Rate, Elapsed: o.Duration}
	if o.Rate <= 0 || o.Duration <= 0 {
		res.FirstErr = errors.New("open loop: the rate and the duration must be positive")
		return res
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 4096
	}
	golden, err := newHTTPConn(url, method)
	if err != nil {
		res.FirstErr = err
		return res
	}
	checker, err := httpGolden(golden, impl, method)
	golden.close()
	if err != nil {
		res.FirstErr = fmt.Errorf("%s %s over HTTP: %w", impl, method, err)
		return res
	}
	pool := &connPool{max: o.MaxConns, url: url, hdrs: Headers(method)}
	defer pool.closeAll()

	var (
		mu       sync.Mutex
		okLat    []time.Duration
		shedLat  []time.Duration
		lags     []time.Duration
		firstErr error
		firstTO  error
		wg       sync.WaitGroup
	)
	n := int(o.Rate*o.Duration.Seconds()) + 16
	okLat, shedLat, lags = make([]time.Duration, 0, n), make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	record := func(measured bool, kind int, lat time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
		case kind == outTimeout:
			if firstTO == nil {
				firstTO = err
			}
		case firstErr == nil:
			firstErr = err
		}
		if !measured {
			return
		}
		switch kind {
		case outOK:
			res.OK++
			okLat = append(okLat, lat)
		case outShed:
			res.Shed++
			shedLat = append(shedLat, lat)
		case outError:
			res.Errors++
		case outTimeout:
			res.Timeouts++
		}
	}
	send := func(c *httpConn, id int64, sched time.Time, measured bool) {
		defer wg.Done()
		defer pool.put(c)
		c.deadline = sched.Add(o.Timeout)
		status, msg, err := c.do(AppendBody(nil, method, id))
		lat := time.Since(sched)
		switch {
		case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
			c.close()
			record(measured, outTimeout, 0, fmt.Errorf("request %d: no answer within %v", id, o.Timeout))
		case err != nil:
			c.close()
			record(measured, outError, 0, fmt.Errorf("request %d: %w", id, err))
		case status == 503 && c.retryAfter:
			record(measured, outShed, lat, nil)
		case status != 200:
			record(measured, outError, 0, fmt.Errorf("request %d: HTTP status %d (Retry-After: %v): %.200q", id, status, c.retryAfter, msg))
		default:
			if err := checker.Check(msg, id); err != nil {
				record(measured, outError, 0, fmt.Errorf("request %d: %w", id, err))
			} else {
				record(measured, outOK, lat, nil)
			}
		}
	}

	rng := rand.New(rand.NewPCG(20, 2026))
	gap := func() time.Duration {
		if o.Poisson {
			return time.Duration(rng.ExpFloat64() / o.Rate * 1e9)
		}
		return time.Duration(1e9 / o.Rate)
	}
	start := time.Now().Add(time.Millisecond)
	mStart, mEnd := start.Add(o.Warmup), start.Add(o.Warmup+o.Duration)
	var cpu0, cpu1, wait0 time.Duration
	var cerr, werr error
	cpuRead := false
	var offset time.Duration
	id := int64(0)
	for {
		sched := start.Add(offset)
		if !sched.Before(mEnd) {
			break
		}
		if now := time.Now(); sched.After(now) {
			time.Sleep(sched.Sub(now))
		}
		// Send everything that is due (the sleep may have overslept).
		now := time.Now()
		for !sched.After(now) && sched.Before(mEnd) {
			measured := !sched.Before(mStart)
			if measured && !cpuRead {
				cpuRead = true
				if o.CPU != nil {
					cpu0, cerr = o.CPU()
				}
				if o.HostWait != nil {
					wait0, werr = o.HostWait()
				}
			}
			id++
			c, err := pool.get()
			switch {
			case err != nil:
				record(measured, outError, 0, err)
			case c == nil:
				if measured {
					mu.Lock()
					res.Missed++
					mu.Unlock()
				}
			default:
				if measured {
					lags = append(lags, now.Sub(sched))
				}
				wg.Add(1)
				go send(c, id, sched, measured)
			}
			if measured {
				res.Scheduled++
			}
			offset += gap()
			sched = start.Add(offset)
		}
	}
	if o.CPU != nil && cerr == nil {
		cpu1, cerr = o.CPU()
		res.CPU = cpu1 - cpu0
	}
	if o.HostWait != nil && werr == nil {
		if wait1, err := o.HostWait(); err == nil {
			res.HostWait = wait1 - wait0
		}
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	res.Conns = pool.peak
	res.FirstErr = firstErr
	if res.FirstErr == nil {
		res.FirstErr = firstTO
	}
	if res.FirstErr == nil && cerr != nil {
		res.FirstErr = fmt.Errorf("reading the server's CPU time: %w", cerr)
	}
	res.P50, res.P99, res.Max = quantiles(okLat)
	res.ShedP50, res.ShedP99, _ = quantiles(shedLat)
	_, res.SendLagP99, _ = quantiles(lags)
	return res
}

// quantiles returns the p50, p99 and maximum of d (zero when empty); it
// sorts d.
func quantiles(d []time.Duration) (p50, p99, mx time.Duration) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	slices.Sort(d)
	at := func(q float64) time.Duration {
		i := int(q * float64(len(d)-1))
		return d[i]
	}
	return at(0.50), at(0.99), d[len(d)-1]
}
