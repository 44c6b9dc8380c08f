package redis

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// redisServer is a real redis-server on a free loopback port with its own
// temporary directory, killed when the test ends.
type redisServer struct {
	t    testing.TB
	bin  string
	dir  string
	Port int
	cmd  *exec.Cmd
}

// startRedis starts redis-server, or skips the test when the binary is
// not installed (CI installs Debian's redis-server: scripts/lib.sh).
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (Debian package redis-server: apt-get install -y redis-server); skipping the tests that need a real Redis")
	}
	r := &redisServer{t: t, bin: bin, dir: t.TempDir(), Port: freePort(t)}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// URL is the redis:// URL of the server.
func (r *redisServer) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.Port) }

// Start starts the server (again, on the same port) and waits until it
// accepts connections.
func (r *redisServer) Start() {
	r.t.Helper()
	r.cmd = exec.Command(r.bin,
		"--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--logfile", filepath.Join(r.dir, "redis.log"))
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("starting redis-server: %v", err)
	}
	// redis-server (a child process) owns the time it takes to listen:
	// poll it with PING, with a deadline.
	defer func() {
		if r.t.Failed() {
			log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
			r.t.Logf("redis.log:\n%s", log)
		}
	}()
	waitFor(r.t, 10*time.Second, fmt.Sprintf("redis-server to answer PING on port %d", r.Port), func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", r.Port), time.Second)
		if err != nil {
			return false
		}
		defer c.Close()
		c.Write([]byte("PING\r\n"))
		buf := make([]byte, 16)
		c.SetReadDeadline(time.Now().Add(time.Second)) // a real socket: net's own deadline
		n, _ := c.Read(buf)
		return strings.HasPrefix(string(buf[:n]), "+PONG")
	})
}

// Stop kills the server.
func (r *redisServer) Stop() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Kill()
	r.cmd.Wait()
	r.cmd = nil
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// logBuffer is a concurrency-safe io.Writer for slog in tests.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
