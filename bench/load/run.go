package load

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Options are the timing of one closed-loop run.
type Options struct {
	// Warmup runs before measuring, at full load, and is not counted.
	Warmup time.Duration
	// Duration is the measured part of the run.
	Duration time.Duration
	// CPU, when set, reports the server's total CPU time so far; it is
	// read at the start and the end of the measured part.
	CPU func() (time.Duration, error)
}

// Result is what one run measured.
type Result struct {
	// Requests counts the responses received, and checked, during the
	// measured part.
	Requests int64
	// Checked counts every response checked, warm-up included.
	Checked int64
	Elapsed time.Duration
	// CPU is the server's CPU time (user+system) during the measured part,
	// or 0 when it was not measured.
	CPU time.Duration
	// Err is the first failure: a wrong response, a transport error. A run
	// with an error is a failing run, whatever its speed.
	Err error
}

// RPS returns the requests per second.
func (r Result) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// CPUPerRequest returns the server CPU time per request, or 0 when unknown.
func (r Result) CPUPerRequest() time.Duration {
	if r.Requests == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Requests)
}

// phases of a run
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// firstErr keeps the first of many errors.
type firstErr struct {
	mu  sync.Mutex
	err error
}

func (f *firstErr) set(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

func (f *firstErr) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// measure drives the phases: warmup, then the measured part between two CPU
// readings. It returns the elapsed time and the CPU used.
func measure(phase *atomic.Int32, opt Options, failed <-chan struct{}) (time.Duration, time.Duration, error) {
	wait := func(d time.Duration) bool {
		select {
		case <-time.After(d):
			return true
		case <-failed:
			return false
		}
	}
	if !wait(opt.Warmup) {
		phase.Store(phaseStop)
		return 0, 0, nil
	}
	var cpu0 time.Duration
	var err error
	if opt.CPU != nil {
		cpu0, err = opt.CPU()
	}
	t0 := time.Now()
	phase.Store(phaseMeasure)
	wait(opt.Duration)
	phase.Store(phaseStop)
	elapsed := time.Since(t0)
	var cpu time.Duration
	if opt.CPU != nil && err == nil {
		var cpu1 time.Duration
		cpu1, err = opt.CPU()
		cpu = cpu1 - cpu0
	}
	return elapsed, cpu, err
}

// RunHTTP drives the MCP endpoint at url with conns keep-alive connections in
// a closed loop (each connection sends its next request when the previous
// response has arrived), sending method requests and checking every
// response of impl.
func RunHTTP(url, impl, method string, conns int, opt Options) Result {
	golden, err := newHTTPConn(url, method)
	if err != nil {
		return Result{Err: err}
	}
	checker, err := httpGolden(golden, impl, method)
	golden.close()
	if err != nil {
		return Result{Err: fmt.Errorf("%s %s over HTTP: %w", impl, method, err)}
	}
	var (
		phase   atomic.Int32
		count   atomic.Int64
		checked atomic.Int64
		fe      firstErr
		failed  = make(chan struct{})
		fail    sync.Once
		wg      sync.WaitGroup
	)
	for w := range conns {
		c, err := newHTTPConn(url, method)
		if err != nil {
			return Result{Err: err}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.close()
			var n, all int64
			var body []byte
			id := int64(w) * 1_000_000_000
			for phase.Load() != phaseStop {
				id++
				body = AppendBody(body[:0], method, id)
				status, msg, err := c.do(body)
				if err == nil && status != 200 {
					err = fmt.Errorf("HTTP status %d: %.200q", status, msg)
				}
				if err == nil {
					err = checker.Check(msg, id)
				}
				if err != nil {
					fe.set(fmt.Errorf("%s %s over HTTP: %w", impl, method, err))
					fail.Do(func() { close(failed) })
					break
				}
				all++
				if phase.Load() == phaseMeasure {
					n++
				}
			}
			count.Add(n)
			checked.Add(all)
		}()
	}
	elapsed, cpu, cerr := measure(&phase, opt, failed)
	wg.Wait()
	r := Result{Requests: count.Load(), Checked: checked.Load(), Elapsed: elapsed, CPU: cpu, Err: fe.get()}
	if r.Err == nil && cerr != nil {
		r.Err = fmt.Errorf("reading the server's CPU time: %w", cerr)
	}
	return r
}

func httpGolden(c *httpConn, impl, method string) (*Checker, error) {
	status, msg, err := c.do(AppendBody(nil, method, goldenID))
	if err != nil {
		return nil, err
	}
	if status != 200 {
		return nil, fmt.Errorf("HTTP status %d: %.300q", status, msg)
	}
	return NewChecker(impl, HTTP, method, msg)
}

// StdioClient speaks newline-delimited JSON-RPC to one server process (or
// any pair of pipes). It is used by one run at a time.
type StdioClient struct {
	w     *bufio.Writer
	r     *bufio.Reader
	close func() // unblocks a stalled reader
}

// NewStdioClient returns a client that writes requests to w and reads
// responses from r. stall, if set, is called when a run gets no response
// for 10 seconds; it must make reads from r fail (kill the process, close
// the pipe).
func NewStdioClient(w io.Writer, r io.Reader, stall func()) *StdioClient {
	return &StdioClient{w: bufio.NewWriterSize(w, 64<<10), r: bufio.NewReaderSize(r, 64<<10), close: stall}
}

// readLine reads one line without its newline; the slice is valid until the
// next read.
func (c *StdioClient) readLine() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		long := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			line, err = c.r.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err != nil {
		return nil, err
	}
	return line[:len(line)-1], nil
}

// roundTrip sends one request and reads one line.
func (c *StdioClient) roundTrip(method string, id int64) ([]byte, error) {
	c.w.Write(AppendBody(nil, method, id))
	c.w.WriteByte('\n')
	if err := c.w.Flush(); err != nil {
		return nil, err
	}
	return c.readLine()
}

const stallTimeout = 10 * time.Second

// ring tracks the ids in flight; ids increase, and fewer than its size are
// ever in flight at once.
const ringSize = 1 << 16

// RunStdio drives the connection with inflight requests pipelined: a new
// request is written as soon as a response arrives, so that inflight
// requests are always outstanding. Every response of impl is checked, and
// must answer a request that is in flight.
func (c *StdioClient) RunStdio(impl, method string, inflight int, opt Options) Result {
	line, err := c.roundTrip(method, goldenID)
	if err != nil {
		return Result{Err: fmt.Errorf("%s %s over stdio: %w", impl, method, err)}
	}
	checker, err := NewChecker(impl, Stdio, method, line)
	if err != nil {
		return Result{Err: fmt.Errorf("%s %s over stdio: %w", impl, method, err)}
	}

	var (
		phase   atomic.Int32
		fe      firstErr
		failed  = make(chan struct{})
		fail    sync.Once
		ring    = make([]atomic.Bool, ringSize)
		tokens  = make(chan struct{}, inflight)
		stop    = make(chan struct{})
		sent    atomic.Int64
		sentSig = make(chan struct{}, 1)
		wdone   = make(chan struct{})
		got     int64
		counted int64
	)
	setErr := func(err error) {
		fe.set(fmt.Errorf("%s %s over stdio: %w", impl, method, err))
		fail.Do(func() { close(failed) })
	}
	for range inflight {
		tokens <- struct{}{}
	}
	// The writer keeps inflight requests outstanding.
	go func() {
		defer close(wdone)
		var buf []byte
		id := int64(1)
		for {
			select {
			case <-tokens:
			case <-stop:
				return
			}
			n := 1
		more:
			for n < inflight {
				select {
				case <-tokens:
					n++
				default:
					break more
				}
			}
			for range n {
				ring[id&(ringSize-1)].Store(true)
				buf = AppendBody(buf, method, id)
				buf = append(buf, '\n')
				id++
			}
			_, err := c.w.Write(buf)
			if err == nil {
				err = c.w.Flush()
			}
			if err != nil {
				setErr(err)
				return
			}
			buf = buf[:0]
			sent.Add(int64(n))
			select {
			case sentSig <- struct{}{}:
			default:
			}
		}
	}()
	// A watchdog turns a stalled server into a failure instead of a hang.
	progress := make(chan struct{}, 1)
	wdStop := make(chan struct{})
	go func() {
		t := time.NewTimer(stallTimeout)
		defer t.Stop()
		for {
			select {
			case <-wdStop:
				return
			case <-progress:
				t.Reset(stallTimeout)
			case <-t.C:
				setErr(errors.New("no response for 10s"))
				if c.close != nil {
					c.close()
				}
				return
			}
		}
	}()
	type measured struct {
		elapsed, cpu time.Duration
		err          error
	}
	mres := make(chan measured, 1)
	go func() {
		elapsed, cpu, err := measure(&phase, opt, failed)
		close(stop)
		mres <- measured{elapsed, cpu, err}
	}()
	// The reader checks responses and hands tokens back. It reads only when
	// a response is due, and ends when the writer has stopped and every
	// request has been answered.
	for {
		if got == sent.Load() {
			select {
			case <-wdone:
				if got == sent.Load() {
					goto done
				}
			case <-sentSig:
			}
			continue
		}
		line, err := c.readLine()
		if err != nil {
			setErr(err)
			break
		}
		select {
		case progress <- struct{}{}:
		default:
		}
		id, ok := checker.ResponseID(line)
		if !ok || !ring[id&(ringSize-1)].CompareAndSwap(true, false) {
			setErr(fmt.Errorf("response to no request in flight: %.200q", line))
			break
		}
		if err := checker.Check(line, id); err != nil {
			setErr(err)
			break
		}
		got++
		if phase.Load() == phaseMeasure {
			counted++
		}
		select {
		case tokens <- struct{}{}:
		default:
		}
	}
done:
	close(wdStop)
	m := <-mres
	<-wdone
	r := Result{Requests: counted, Checked: got, Elapsed: m.elapsed, CPU: m.cpu, Err: fe.get()}
	if r.Err == nil && m.err != nil {
		r.Err = fmt.Errorf("reading the server's CPU time: %w", m.err)
	}
	return r
}
