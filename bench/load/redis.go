package load

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Redis is a redis-server process for the replicas case: on 127.0.0.1, on
// a port that was free a moment before, with its own temporary directory,
// no persistence (--save "" --appendonly no), killed by Stop or, should the
// harness die first, by the kernel (the parent-death signal, on Linux).
type Redis struct {
	// URL is the redis:// URL of the server (database 0).
	URL string
	// Addr is its host:port.
	Addr string

	dir    string
	cmd    *exec.Cmd
	waited chan struct{}
}

// StartRedis starts the redis-server binary bin and waits (at most 10 s)
// until it answers PING.
func StartRedis(bin string) (*Redis, error) {
	dir, err := os.MkdirTemp("", "benchredis")
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	r := &Redis{
		Addr:   "127.0.0.1:" + strconv.Itoa(port),
		URL:    fmt.Sprintf("redis://127.0.0.1:%d/0", port),
		dir:    dir,
		waited: make(chan struct{}),
	}
	r.cmd = exec.Command(bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--logfile", filepath.Join(dir, "redis.log"))
	killWithParent(r.cmd)
	if err := r.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() { r.cmd.Wait(); close(r.waited) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := r.Ping(); err == nil {
			return r, nil
		} else if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			r.Stop()
			return nil, fmt.Errorf("redis-server did not answer PING on %s within 10s: %v\n%s", r.Addr, err, log)
		}
		select {
		case <-r.waited:
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			r.Stop()
			return nil, fmt.Errorf("redis-server exited at start: %v\n%s", r.cmd.ProcessState, log)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Ping sends one PING on a fresh connection and returns the round trip of
// the command (the dial left out).
func (r *Redis) Ping() (time.Duration, error) {
	c, err := net.DialTimeout("tcp", r.Addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 16)
	t0 := time.Now()
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return 0, err
	}
	n, err := c.Read(buf)
	d := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if !strings.HasPrefix(string(buf[:n]), "+PONG") {
		return 0, fmt.Errorf("PING answered %q", buf[:n])
	}
	return d, nil
}

// RoundTrips sends n PINGs, one at a time, on one connection and returns
// the round trip of each.
func (r *Redis) RoundTrips(n int) ([]time.Duration, error) {
	c, err := net.DialTimeout("tcp", r.Addr, time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 16)
	out := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			return nil, err
		}
		k, err := io.ReadAtLeast(c, buf, len("+PONG\r\n"))
		if err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
		if string(buf[:k]) != "+PONG\r\n" {
			return nil, fmt.Errorf("PING answered %q", buf[:k])
		}
	}
	return out, nil
}

// Pid returns the process id.
func (r *Redis) Pid() int { return r.cmd.Process.Pid }

// Stop kills the server and removes its directory.
func (r *Redis) Stop() {
	r.cmd.Process.Kill()
	<-r.waited
	os.RemoveAll(r.dir)
}
