package redis

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// startRedis starts a redis-server of its own on a free loopback port,
// without persistence, and returns its address. The server stops when the
// test ends. The test is skipped when redis-server is not installed
// (apt-get install redis-server).
func startRedis(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (apt-get install -y redis-server): skipping the tests against a real Redis")
	}
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port),
			"--save", "", "--appendonly", "no", "--protected-mode", "yes", "--dir", t.TempDir())
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting redis-server: %v", err)
		}
		ready := make(chan bool, 1)
		go func() {
			sc := bufio.NewScanner(out)
			ok := false
			for sc.Scan() {
				if !ok && strings.Contains(sc.Text(), "Ready to accept connections") {
					ok = true
					ready <- true
				}
			}
			if !ok {
				ready <- false
			}
		}()
		var up bool
		select {
		case up = <-ready:
		case <-time.After(10 * time.Second):
		}
		if up {
			t.Cleanup(func() {
				cmd.Process.Signal(os.Interrupt)
				done := make(chan struct{})
				go func() { cmd.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					cmd.Process.Kill()
					<-done
				}
			})
			return addr
		}
		cmd.Process.Kill()
		cmd.Wait()
		if attempt == 2 {
			t.Fatalf("redis-server did not start on %s", addr)
		}
		// The port was taken between freePort and the start: try another.
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// newClient returns a client of the Redis at addr, closed when the test
// ends.
func newClient(t testing.TB, addr string) *goredis.Client {
	rdb := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("ping %s: %v", addr, err)
	}
	return rdb
}
