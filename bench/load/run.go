package load

import (
	"bytes"

	"bufio"
	"errors"
	"fmt"
	"github.com/mcpkit/mcpkit/bench/servers"
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

// Result is what one run (or one slice of a run) measured.
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

// Add accumulates another slice of the same run.
func (r *Result) Add(s Result) {
	r.Requests += s.Requests
	r.Elapsed += s.Elapsed
	r.CPU += s.CPU
	r.Checked = max(r.Checked, s.Checked)
	if r.Err == nil {
		r.Err = s.Err
	}
}

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

// A Driver keeps a closed-loop load of one case on one server and measures
// it in slices. Between slices the load pauses (nothing is in flight), so
// that the drivers of several implementations can take turns at short
// intervals and share equally whatever else the machine is doing. A Driver
// is used by one goroutine at a time.
type Driver struct {
	label string // "impl method over transport", for errors
	cpu   func() (time.Duration, error)

	gate     atomic.Pointer[chan struct{}] // closed while the load runs
	active   atomic.Int64                  // goroutines past the gate
	counting atomic.Bool
	stopping atomic.Bool
	count    atomic.Int64 // responses received while counting
	checked  atomic.Int64 // responses checked
	fe       firstErr
	failed   chan struct{}
	failOnce sync.Once

	// idle reports whether nothing is in flight; nil when active == 0 is
	// enough (HTTP).
	idle func() bool
	// stop ends the load; it is called once, and waits.
	stop func()
}

func newDriver(label string, cpu func() (time.Duration, error)) *Driver {
	d := &Driver{label: label, cpu: cpu, failed: make(chan struct{})}
	paused := make(chan struct{})
	d.gate.Store(&paused)
	return d
}

func (d *Driver) fail(err error) {
	d.fe.set(fmt.Errorf("%s: %w", d.label, err))
	d.failOnce.Do(func() { close(d.failed) })
}

// enter is called by a load goroutine before each request: it blocks while
// the driver is paused and reports false when the driver stops. A goroutine
// that entered calls exit when its request is sent (stdio) or answered
// (HTTP).
func (d *Driver) enter() bool {
	for {
		d.active.Add(1)
		if d.stopping.Load() {
			d.active.Add(-1)
			return false
		}
		g := d.gate.Load()
		select {
		case <-*g:
			return true
		default:
		}
		d.active.Add(-1)
		<-*g // paused: wait for the next slice (or the stop)
	}
}

func (d *Driver) exit() { d.active.Add(-1) }

func (d *Driver) resume() {
	close(*d.gate.Load())
}

// pause stops new requests and waits until nothing is in flight.
func (d *Driver) pause() {
	ch := make(chan struct{})
	d.gate.Store(&ch)
	deadline := time.Now().Add(stallTimeout)
	for d.active.Load() != 0 || (d.idle != nil && !d.idle()) {
		select {
		case <-d.failed:
			return
		default:
		}
		if time.Now().After(deadline) {
			d.fail(errors.New("requests still in flight 10s after the load paused"))
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// sleep waits for t, or less when the driver fails.
func (d *Driver) sleep(t time.Duration) {
	select {
	case <-time.After(t):
	case <-d.failed:
	}
}

// Measure runs the load for warmup, then measures it for dur, and pauses
// it again.
func (d *Driver) Measure(warmup, dur time.Duration) Result {
	if err := d.fe.get(); err != nil {
		return Result{Err: err}
	}
	d.resume()
	d.sleep(warmup)
	var cpu0, cpu1 time.Duration
	var cerr error
	if d.cpu != nil {
		cpu0, cerr = d.cpu()
	}
	n0 := d.count.Load()
	t0 := time.Now()
	d.counting.Store(true)
	d.sleep(dur)
	d.counting.Store(false)
	elapsed := time.Since(t0)
	n := d.count.Load() - n0
	if d.cpu != nil && cerr == nil {
		cpu1, cerr = d.cpu()
	}
	d.pause()
	r := Result{Requests: n, Checked: d.checked.Load(), Elapsed: elapsed, CPU: cpu1 - cpu0, Err: d.fe.get()}
	if r.Err == nil && cerr != nil {
		r.Err = fmt.Errorf("reading the server's CPU time: %w", cerr)
	}
	return r
}

// Close ends the load and returns the first failure.
func (d *Driver) Close() error {
	d.stopping.Store(true)
	d.resume() // wake the paused goroutines, which see stopping
	d.stop()
	return d.fe.get()
}

// response counts a checked response.
func (d *Driver) response() {
	d.checked.Add(1)
	if d.counting.Load() {
		d.count.Add(1)
	}
}

// NewHTTPDriver prepares a load of conns keep-alive connections on the MCP
// endpoint at url, each sending method requests in a closed loop (the next
// request when the previous response has arrived) and checking every
// response of impl. It opens the connections and checks one response
// deeply before it returns; the load starts with the first Measure.
func NewHTTPDriver(url, impl, method string, conns int, cpu func() (time.Duration, error)) (*Driver, error) {
	label := impl + " " + method + " over HTTP"
	golden, err := newHTTPConn(url, method)
	if err != nil {
		return nil, err
	}
	if method == LegacyCall {
		err = golden.initLegacy(impl)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	checker, err := httpGolden(golden, impl, method)
	golden.close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	d := newDriver(label, cpu)
	var wg sync.WaitGroup
	for w := range conns {
		c, err := newHTTPConn(url, method)
		if err != nil {
			return nil, err
		}
		if err := c.dial(); err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
		if method == LegacyCall {
			if err := c.initLegacy(impl); err != nil {
				return nil, fmt.Errorf("%s: connection %d: %w", label, w, err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.close()
			var body []byte
			id := int64(w) * 1_000_000_000
			for d.enter() {
				id++
				body = AppendBody(body[:0], method, id)
				status, msg, err := c.do(body)
				if err == nil && status != 200 {
					err = fmt.Errorf("HTTP status %d: %.200q", status, msg)
				}
				if err == nil {
					err = checker.Check(msg, id)
				}
				d.exit()
				if err != nil {
					d.fail(err)
					return
				}
				d.response()
			}
		}()
	}
	d.stop = wg.Wait
	return d, nil
}

// RunHTTP measures one run of conns connections on the MCP endpoint at
// url: a Driver's warm-up and one measured slice.
func RunHTTP(url, impl, method string, conns int, opt Options) Result {
	d, err := NewHTTPDriver(url, impl, method, conns, opt.CPU)
	if err != nil {
		return Result{Err: err}
	}
	r := d.Measure(opt.Warmup, opt.Duration)
	if err := d.Close(); r.Err == nil {
		r.Err = err
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
// any pair of pipes). It is used by one Driver at a time.
type StdioClient struct {
	w     *bufio.Writer
	r     *bufio.Reader
	close func() // unblocks a stalled reader
	// legacy is set once the connection was initialized for LegacyCall.
	legacy bool
}

// legacyInitialize is the initialize request of the legacy case.
const legacyInitialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + LegacyVersion + `","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"bench-client","version":"1.0.0"}}}`

// initLegacy opens a 2025-11-25 session on the HTTP connection: initialize
// (checked; its Mcp-Session-Id kept), then notifications/initialized with
// the session id (202 or 200). Every later request carries the session id.
// The floor does no handshake; it gets a fixed session id.
func (c *httpConn) initLegacy(impl string) error {
	if impl == servers.Floor {
		c.head = append(c.head, "Mcp-Session-Id: floor\r\n"...)
		return nil
	}
	c.session = ""
	status, msg, err := c.do([]byte(legacyInitialize))
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if status != 200 || !bytes.Contains(msg, []byte(`"protocolVersion":"`+LegacyVersion+`"`)) {
		return fmt.Errorf("initialize answered HTTP %d %.300q, want protocolVersion %s", status, msg, LegacyVersion)
	}
	if c.session != "" {
		c.head = append(c.head, "Mcp-Session-Id: "+c.session+"\r\n"...)
	}
	status, msg, err = c.do([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	if status != 202 && status != 200 {
		return fmt.Errorf("notifications/initialized answered HTTP %d %.300q", status, msg)
	}
	return nil
}

// initLegacy opens the legacy era on the connection: initialize, checked,
// then notifications/initialized. The stdio floor echoes the request.
func (c *StdioClient) initLegacy(impl string) error {
	if c.legacy {
		return nil
	}
	c.w.WriteString(legacyInitialize + "\n")
	if err := c.w.Flush(); err != nil {
		return err
	}
	line, err := c.readLine()
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if impl != servers.Floor && !bytes.Contains(line, []byte(`"protocolVersion":"`+LegacyVersion+`"`)) {
		return fmt.Errorf("initialize answered %.300q, want protocolVersion %s", line, LegacyVersion)
	}
	if impl != servers.Floor {
		c.w.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
		if err := c.w.Flush(); err != nil {
			return err
		}
	}
	c.legacy = true
	return nil
}

// NewStdioClient returns a client that writes requests to w and reads
// responses from r. stall, if set, is called when a load gets no response
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

// Driver prepares a load of inflight pipelined method requests on the
// connection: a new request is written as soon as a response arrives, so
// that inflight requests are always outstanding. Every response of impl is
// checked, and must answer a request that is in flight. It checks one
// response deeply before it returns; the load starts with the first
// Measure.
func (c *StdioClient) Driver(impl, method string, inflight int, cpu func() (time.Duration, error)) (*Driver, error) {
	label := impl + " " + method + " over stdio"
	if method == LegacyCall {
		if err := c.initLegacy(impl); err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
	}
	line, err := c.roundTrip(method, goldenID)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	checker, err := NewChecker(impl, Stdio, method, line)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	d := newDriver(label, cpu)
	var (
		ring    = make([]atomic.Bool, ringSize)
		tokens  = make(chan struct{}, inflight)
		sent    atomic.Int64
		got     atomic.Int64
		sentSig = make(chan struct{}, 1)
		wdone   = make(chan struct{})
		rdone   = make(chan struct{})
	)
	d.idle = func() bool { return got.Load() == sent.Load() }
	for range inflight {
		tokens <- struct{}{}
	}
	// The writer keeps inflight requests outstanding while the load runs.
	go func() {
		defer close(wdone)
		var buf []byte
		id := int64(1)
		for {
			select {
			case <-tokens:
			case <-d.failed:
				return
			}
			if !d.enter() {
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
			sent.Add(int64(n))
			_, err := c.w.Write(buf)
			if err == nil {
				err = c.w.Flush()
			}
			d.exit()
			select {
			case sentSig <- struct{}{}:
			default:
			}
			if err != nil {
				d.fail(err)
				return
			}
			buf = buf[:0]
		}
	}()
	// A watchdog turns a stalled server into a failure instead of a hang.
	progress := make(chan struct{}, 1)
	go func() {
		t := time.NewTimer(stallTimeout)
		defer t.Stop()
		for {
			select {
			case <-rdone:
				return
			case <-progress:
				t.Reset(stallTimeout)
			case <-t.C:
				if got.Load() == sent.Load() {
					t.Reset(stallTimeout) // paused, nothing due
					continue
				}
				d.fail(errors.New("no response for 10s"))
				if c.close != nil {
					c.close()
				}
				return
			}
		}
	}()
	// The reader checks responses and hands tokens back. It reads only when
	// a response is due, and ends when the writer has stopped and every
	// request has been answered.
	go func() {
		defer close(rdone)
		writerDone := false
		for {
			if got.Load() == sent.Load() {
				if writerDone {
					return
				}
				select {
				case <-wdone:
					writerDone = true
				case <-sentSig:
				}
				continue
			}
			line, err := c.readLine()
			if err != nil {
				d.fail(err)
				return
			}
			select {
			case progress <- struct{}{}:
			default:
			}
			id, ok := checker.ResponseID(line)
			if !ok || !ring[id&(ringSize-1)].CompareAndSwap(true, false) {
				d.fail(fmt.Errorf("response to no request in flight: %.200q", line))
				return
			}
			if err := checker.Check(line, id); err != nil {
				d.fail(err)
				return
			}
			d.response()
			got.Add(1)
			tokens <- struct{}{}
		}
	}()
	d.stop = func() {
		<-wdone
		<-rdone
	}
	return d, nil
}

// RunStdio measures one run of inflight pipelined requests on the
// connection: a Driver's warm-up and one measured slice.
func (c *StdioClient) RunStdio(impl, method string, inflight int, opt Options) Result {
	d, err := c.Driver(impl, method, inflight, opt.CPU)
	if err != nil {
		return Result{Err: err}
	}
	r := d.Measure(opt.Warmup, opt.Duration)
	if err := d.Close(); r.Err == nil {
		r.Err = err
	}
	return r
}
