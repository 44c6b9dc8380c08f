// Command benchbridge measures mcpkit bridge side by side with the native
// server and two npm peers: tools/call (test_simple_text of `mcpkit serve
// --fixtures`) at a few numbers of concurrent callers, each caller its own
// client, over Streamable HTTP on loopback.
//
//	go build -o /tmp/mcpkit ../cmd/mcpkit   # from the repository root
//	go run ./cmd/benchbridge -mcpkit /tmp/mcpkit -peers ~/.cache/mcpkit/bridgepeers -node NODE22_BIN
//
// The targets, each in front of the same backend (`mcpkit serve --stdio
// --fixtures --era legacy`, one process):
//
//   - native: `mcpkit serve --fixtures` over HTTP (the reference);
//   - bridge: `mcpkit bridge --max-sessions 1 -- BACKEND`;
//   - mcp-proxy: `mcp-proxy --port P -- BACKEND` (punkpeye, npm);
//   - supergateway: `supergateway --stdio BACKEND --outputTransport
//     streamableHttp` (npm; its default, stateless mode).
//
// The peers are installed by name in the test cache only (see
// bench/NOTES.md); a target whose program is missing is skipped.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/bench/load"
	"github.com/mcpkit/mcpkit/client"
)

func main() {
	mcpkit := flag.String("mcpkit", "mcpkit", "the mcpkit binary")
	peers := flag.String("peers", "", "the npm prefix holding mcp-proxy and supergateway (empty: skip them)")
	node := flag.String("node", "", "the directory of Node 22, put first on PATH for the peers")
	duration := flag.Duration("duration", 3*time.Second, "measuring time per target and level")
	levels := flag.String("levels", "1,16", "numbers of concurrent callers")
	flag.Parse()
	if *node != "" {
		os.Setenv("PATH", *node+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	backend := []string{*mcpkit, "serve", "--stdio", "--fixtures", "--era", "legacy"}
	type target struct {
		name  string
		start func() (url string, cmd *exec.Cmd, err error)
	}
	targets := []target{
		{"native (mcpkit serve, HTTP)", func() (string, *exec.Cmd, error) {
			return load.StartLogged(30*time.Second, *mcpkit, "serve", "--addr", "127.0.0.1:0", "--fixtures")
		}},
		{"mcpkit bridge", func() (string, *exec.Cmd, error) {
			return load.StartLogged(30*time.Second, *mcpkit, append([]string{"bridge", "--addr", "127.0.0.1:0", "--max-sessions", "1", "--"}, backend...)...)
		}},
	}
	if *peers != "" {
		bin := filepath.Join(*peers, "node_modules", ".bin")
		targets = append(targets,
			target{"mcp-proxy 6.7.19", func() (string, *exec.Cmd, error) {
				port := freePort()
				return startPort(port, "/mcp", filepath.Join(bin, "mcp-proxy"), append([]string{"--port", port, "--host", "127.0.0.1", "--"}, backend...)...)
			}},
			target{"supergateway 4.0.0", func() (string, *exec.Cmd, error) {
				port := freePort()
				return startPort(port, "/mcp", filepath.Join(bin, "supergateway"), "--stdio", strings.Join(backend, " "),
					"--outputTransport", "streamableHttp", "--port", port, "--streamableHttpPath", "/mcp")
			}},
		)
	}
	fmt.Println("| target | callers | calls/s | p50 | p99 | errors |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, t := range targets {
		url, cmd, err := t.start()
		if err != nil {
			fmt.Printf("| %s | | start failed: %v | | | |\n", t.name, err)
			continue
		}
		for _, l := range strings.Split(*levels, ",") {
			n, _ := strconv.Atoi(l)
			r := measure(url, n, *duration)
			fmt.Printf("| %s | %d | %.0f | %s | %s | %d |\n", t.name, n, r.rate, r.p50, r.p99, r.errors)
		}
		load.KillGroup(cmd)
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// startPort starts a peer on port and waits until it accepts connections.
func startPort(port, path, name string, args ...string) (string, *exec.Cmd, error) {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = load.GroupAttr()
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	addr := "127.0.0.1:" + port
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr + path, cmd, nil
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return "", nil, fmt.Errorf("%s did not listen on %s", name, addr)
}

func freePort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

type result struct {
	rate     float64
	p50, p99 time.Duration
	errors   int
}

// measure runs n callers, each with its own client, calling
// test_simple_text for d, after one warm-up call each.
func measure(url string, n int, d time.Duration) result {
	ctx := context.Background()
	clients := make([]*client.Client, n)
	for i := range clients {
		c, err := client.Connect(ctx, &client.HTTPTransport{URL: url}, &client.Options{NoCache: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, "connect:", err)
			return result{errors: 1}
		}
		defer c.Close()
		if _, err := c.CallTool(ctx, "test_simple_text", nil); err != nil {
			fmt.Fprintln(os.Stderr, "warm-up:", err)
		}
		clients[i] = c
	}
	var (
		mu     sync.Mutex
		lat    []time.Duration
		errors int
		wg     sync.WaitGroup
	)
	end := time.Now().Add(d)
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			bad := 0
			for time.Now().Before(end) {
				t0 := time.Now()
				if _, err := c.CallTool(ctx, "test_simple_text", nil); err != nil {
					bad++
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			errors += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	r := result{rate: float64(len(lat)) / d.Seconds(), errors: errors}
	if len(lat) > 0 {
		r.p50 = lat[len(lat)/2].Round(time.Microsecond)
		r.p99 = lat[len(lat)*99/100].Round(time.Microsecond)
	}
	return r
}
