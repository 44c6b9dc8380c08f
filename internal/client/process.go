package client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// CommandOptions configures StartCommand. The zero value is usable.
type CommandOptions struct {
	// Env is added to the current environment, or is the whole
	// environment when ReplaceEnv is set.
	Env []string
	// ReplaceEnv makes Env the process's whole environment.
	ReplaceEnv bool
	// Dir is the working directory; default the current one.
	Dir string
	// Grace is how long Close waits for the process to exit after closing
	// its stdin, and again after asking it to terminate, before killing
	// it. Default 2s.
	Grace time.Duration
	// Stderr, if set, receives a copy of the process's stderr.
	Stderr io.Writer
}

// Exit says how a server process ended.
type Exit struct {
	// Code is the exit status, or -1 when a signal ended the process.
	Code int `json:"code"`
	// Forced names the signal Close had to send ("SIGTERM", "SIGKILL"),
	// or is "" when the process exited by itself.
	Forced string `json:"forced,omitempty"`
	// AfterStdinClose is how long the process took to exit after its
	// stdin was closed (zero if it exited before).
	AfterStdinClose time.Duration `json:"-"`
}

// process is a server process behind a StreamConn.
type process struct {
	cmd    *exec.Cmd
	stderr *tail
	grace  time.Duration
	waited chan struct{} // closed when the process has exited

	mu       sync.Mutex
	waitErr  error
	closedAt time.Time
	forced   string
	exitedAt time.Time
}

// StartCommand starts argv as a stdio MCP server and returns a connection
// to it. The process gets a process group of its own (on Unix), so that
// Close also ends the children of wrappers such as npx.
func StartCommand(argv []string, opts *CommandOptions) (*StreamConn, error) {
	if len(argv) == 0 {
		return nil, &TransportError{Op: "starting the server", Err: errors.New("no command given")}
	}
	var o CommandOptions
	if opts != nil {
		o = *opts
	}
	if o.Grace <= 0 {
		o.Grace = 2 * time.Second
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = o.Dir
	switch {
	case o.ReplaceEnv:
		cmd.Env = append([]string{}, o.Env...) // non-nil: nothing inherited
	case len(o.Env) > 0:
		cmd.Env = append(os.Environ(), o.Env...)
	}
	setProcessGroup(cmd)
	p := &process{cmd: cmd, stderr: &tail{max: 16 << 10}, grace: o.Grace, waited: make(chan struct{})}
	if o.Stderr != nil {
		cmd.Stderr = smallCopy{io.MultiWriter(p.stderr, o.Stderr)}
	} else {
		cmd.Stderr = smallCopy{p.stderr}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, &TransportError{Op: "starting " + argv[0], Err: err}
	}
	pr, pw := io.Pipe()
	cmd.Stdout = smallCopy{pw}
	// Children that inherit stdout must not keep Wait from returning.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, &TransportError{Op: "starting " + argv[0], Err: err}
	}
	go func() {
		awaitExit(cmd.Process.Pid)
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.exitedAt = time.Now()
		p.mu.Unlock()
		pw.Close()
		close(p.waited)
	}()
	c := &StreamConn{w: newLineWriter(stdin), mux: newMux(), proc: p, done: make(chan struct{})}
	go c.readLoop(pr)
	return c, nil
}

// copyBuffer is the size of the buffer os/exec's goroutines copy a
// process's stdout and stderr with (through smallCopy), in place of
// io.Copy's 32 KiB: every idle connection keeps two.
const copyBuffer = 4 << 10

// smallCopy is a writer that os/exec copies a process's output to with a
// copyBuffer-sized buffer (io.Copy uses a writer's ReadFrom).
type smallCopy struct{ w io.Writer }

func (s smallCopy) Write(b []byte) (int, error) { return s.w.Write(b) }

// ReadFrom copies r to the writer until r ends, copyBuffer bytes at a
// time.
func (s smallCopy) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	buf := make([]byte, copyBuffer)
	for {
		m, err := r.Read(buf)
		if m > 0 {
			k, werr := s.w.Write(buf[:m])
			n += int64(k)
			if werr != nil {
				return n, werr
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// shutdown runs after stdin was closed: it waits for the process, then
// asks it to terminate, then kills it.
func (p *process) shutdown() error {
	p.mu.Lock()
	if p.closedAt.IsZero() {
		p.closedAt = time.Now()
	}
	p.mu.Unlock()
	select {
	case <-p.waited:
		p.endGroup()
		return nil
	case <-time.After(p.grace):
	}
	p.setForced("SIGTERM")
	terminate(p.cmd)
	select {
	case <-p.waited:
		p.endGroup()
		return nil
	case <-time.After(p.grace):
	}
	p.setForced("SIGKILL")
	kill(p.cmd)
	<-p.waited
	return nil
}

// endGroup runs once the server process exited: processes it started in
// its group (a wrapper's child, which exiting on stdin EOF leaves behind)
// are asked to terminate, and killed after the grace period if any is
// left. Close does not wait for them.
func (p *process) endGroup() {
	if !groupAlive(p.cmd) {
		return
	}
	terminate(p.cmd)
	time.AfterFunc(p.grace, func() {
		if groupAlive(p.cmd) {
			kill(p.cmd)
		}
	})
}

func (p *process) setForced(sig string) {
	p.mu.Lock()
	p.forced = sig
	p.mu.Unlock()
}

func (p *process) exit() (Exit, bool) {
	select {
	case <-p.waited:
	default:
		return Exit{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e := Exit{Code: p.cmd.ProcessState.ExitCode(), Forced: p.forced}
	if !p.closedAt.IsZero() && p.exitedAt.After(p.closedAt) {
		e.AfterStdinClose = p.exitedAt.Sub(p.closedAt)
	}
	return e, true
}

// explain adds the process's exit status, the first stdout lines that were
// not JSON-RPC, and the end of its stderr to err.
func (p *process) explain(err error, garbage []string) error {
	select {
	case <-p.waited:
	case <-time.After(300 * time.Millisecond):
	}
	var b strings.Builder
	b.WriteString(err.Error())
	if e, ok := p.exit(); ok {
		fmt.Fprintf(&b, " (the server exited with status %d)", e.Code)
	}
	if len(garbage) > 0 {
		fmt.Fprintf(&b, "; it wrote %d line(s) to stdout that are not JSON-RPC, the first: %q", len(garbage), garbage[0])
	}
	if t := p.stderr.lastLines(8); t != "" {
		b.WriteString("; its stderr ends with:\n" + t)
	}
	return &processError{msg: b.String(), err: err}
}

type processError struct {
	msg string
	err error
}

func (e *processError) Error() string { return e.msg }
func (e *processError) Unwrap() error { return e.err }

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

func (t *tail) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(bytes.ToValidUTF8(t.buf, []byte("?"))), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := strings.TrimSpace(strings.Join(lines, "\n"))
	if out == "" {
		return ""
	}
	return "  " + strings.ReplaceAll(out, "\n", "\n  ")
}
