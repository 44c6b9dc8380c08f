package load

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Proc is one server process under test.
type Proc struct {
	Impl, Transport string
	// URL is the MCP endpoint of an HTTP server.
	URL string
	// Stdio is the client of a stdio server.
	Stdio *StdioClient
	// FirstDiscover is the time from starting the process to the first
	// server/discover answered (and checked).
	FirstDiscover time.Duration

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tailBuffer
	waited chan struct{}
}

// Start starts argv (the benchserver command, without -impl and -transport)
// for impl on transport, and waits until it has answered one server/discover
// correctly.
func Start(argv []string, impl, transport string) (*Proc, error) {
	return start(argv, impl, transport, false)
}

// StartLegacy starts argv for impl on transport for the LegacyCall case.
// On stdio it opens the legacy era (initialize, notifications/initialized)
// instead of sending server/discover: a connection that spoke the modern era
// may refuse initialize (go-sdk answers "duplicate initialize"), and
// FirstDiscover is the time to the initialize answer. On HTTP the server
// runs with -stateful (the peers' stateful handlers, with sessions) and
// FirstDiscover is the time until it printed its URL; every connection of
// the load opens its own session.
func StartLegacy(argv []string, impl, transport string) (*Proc, error) {
	if transport == HTTP {
		argv = append(slices.Clone(argv), "-stateful")
	}
	return start(argv, impl, transport, true)
}

func start(argv []string, impl, transport string, legacy bool) (*Proc, error) {
	args := append(append([]string(nil), argv[1:]...), "-impl", impl, "-transport", transport)
	cmd := exec.Command(argv[0], args...)
	p := &Proc{Impl: impl, Transport: transport, cmd: cmd, stderr: &tailBuffer{max: 4096}, waited: make(chan struct{})}
	cmd.Stderr = p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.stdin = stdin
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { cmd.Wait(); close(p.waited) }()
	fail := func(err error) (*Proc, error) {
		p.Stop()
		return nil, fmt.Errorf("%s over %s: %w%s", impl, transport, err, p.stderr.suffix())
	}
	timer := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	switch transport {
	case HTTP:
		br := bufio.NewReader(stdout)
		line, err := br.ReadString('\n')
		if err != nil {
			return fail(fmt.Errorf("reading the URL: %w", err))
		}
		go io.Copy(io.Discard, br)
		p.URL = strings.TrimSpace(line)
		if legacy {
			p.FirstDiscover = time.Since(t0)
			break
		}
		c, err := newHTTPConn(p.URL, Discover)
		if err != nil {
			return fail(err)
		}
		defer c.close()
		status, msg, err := c.do(AppendBody(nil, Discover, 1))
		p.FirstDiscover = time.Since(t0)
		if err == nil && status != 200 {
			err = fmt.Errorf("HTTP status %d: %.200q", status, msg)
		}
		if err == nil {
			err = CheckDeep(impl, transport, Discover, msg, 1)
		}
		if err != nil {
			return fail(fmt.Errorf("first server/discover: %w", err))
		}
	case Stdio:
		p.Stdio = NewStdioClient(stdin, stdout, func() { cmd.Process.Kill() })
		if legacy {
			err := p.Stdio.initLegacy(impl)
			p.FirstDiscover = time.Since(t0)
			if err != nil {
				return fail(err)
			}
			break
		}
		line, err := p.Stdio.roundTrip(Discover, 1)
		p.FirstDiscover = time.Since(t0)
		if err == nil {
			err = CheckDeep(impl, transport, Discover, line, 1)
		}
		if err != nil {
			return fail(fmt.Errorf("first server/discover: %w", err))
		}
	default:
		return fail(fmt.Errorf("unknown transport"))
	}
	return p, nil
}

// Pid returns the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// CPU returns the process's CPU time so far (user plus system, all
// threads), from /proc/PID/stat.
func (p *Proc) CPU() (time.Duration, error) { return ProcCPU(p.Pid()) }

// PeakRSS returns the process's peak resident set size (VmHWM) in bytes.
func (p *Proc) PeakRSS() (int64, error) { return ProcPeakRSS(p.Pid()) }

// Stop ends the process: it closes its stdin (both transports exit at the
// end of stdin), waits a little, and kills it if it is still running.
func (p *Proc) Stop() error {
	p.stdin.Close()
	select {
	case <-p.waited:
		return nil
	case <-time.After(3 * time.Second):
	}
	p.cmd.Process.Kill()
	<-p.waited
	return errors.New("the server did not exit at the end of stdin; killed")
}

// userHZ is the unit of the CPU times in /proc (USER_HZ, 100 on Linux).
const userHZ = 100

// ProcCPU returns the CPU time (user plus system) of process pid so far.
func ProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses and may
	// contain spaces: state is field 3, utime 14, stime 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return time.Duration(ut+st) * time.Second / userHZ, nil
}

// ProcCPUPrecise returns the CPU time process pid's threads have run so
// far, in nanoseconds (the first field of /proc/PID/task/*/schedstat):
// unlike ProcCPU, whose unit is 10 ms, it can measure a few milliseconds of
// work. Threads that have exited are not counted (Go rarely ends threads).
func ProcCPUPrecise(pid int) (time.Duration, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) < 1 {
			return 0, fmt.Errorf("malformed %s/%s/schedstat", dir, t.Name())
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("malformed %s/%s/schedstat", dir, t.Name())
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// ProcRunqWait returns the time process pid's threads have waited so far
// on a run queue of the host, ready to run but not running (the second
// field of /proc/PID/task/*/schedstat): the CPU the host withheld, as
// opposed to time the process had nothing to run.
func ProcRunqWait(pid int) (time.Duration, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return 0, fmt.Errorf("malformed %s/%s/schedstat", dir, t.Name())
		}
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("malformed %s/%s/schedstat", dir, t.Name())
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// RunqWait returns the time the process's threads have waited for a CPU
// of the host so far (ProcRunqWait).
func (p *Proc) RunqWait() (time.Duration, error) { return ProcRunqWait(p.Pid()) }

// ProcPeakRSS returns VmHWM of process pid in bytes.
func ProcPeakRSS(pid int) (int64, error) { return procStatus(pid, "VmHWM:") }

// ProcRSS returns VmRSS of process pid in bytes.
func ProcRSS(pid int) (int64, error) { return procStatus(pid, "VmRSS:") }

func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				n, err := strconv.ParseInt(f[0], 10, 64)
				return n << 10, err
			}
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", strings.TrimSuffix(field, ":"), pid)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.b) == 0 {
		return ""
	}
	return "; server stderr: " + strings.TrimSpace(string(t.b))
}

// LoadAverage returns the 1, 5 and 15 minute load averages of the machine
// as /proc/loadavg gives them ("0.42 1.09 2.37"), or "unknown" where there
// is no such file. Every report prints it next to its numbers: the machine
// may be shared.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
