package load_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bench/load"
	"github.com/mcpkit/mcpkit/bench/servers"
)

// The test binary doubles as the benchserver command, so that the tests
// drive real server processes without building one.
const serverEnv = "LOAD_TEST_RUN_BENCHSERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		if err := servers.Main(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "benchserver:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func serverArgv(t *testing.T) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"/usr/bin/env", serverEnv + "=1", exe}
}

// TestEveryCaseAnswers is the smoke run of the harness: every
// implementation runs as its own process on both transports, and every case
// runs briefly with every response checked.
func TestEveryCaseAnswers(t *testing.T) {
	// Every implementation's server runs at once, under -race in CI, on
	// two cores: mcpkit's adaptive limit then finds requests queueing for
	// the CPU and sheds some with 503, as it should (the overload tests
	// measure that). This test checks that every case answers, so mcpkit
	// runs with the fixed limit.
	argv := append(serverArgv(t), "-fixed-inflight")
	base := load.Options{Warmup: 20 * time.Millisecond, Duration: 80 * time.Millisecond}
	levels := []int{1, 16}
	if !testing.Short() {
		base = load.Options{Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond}
		levels = []int{1, 16, 64}
	}
	for _, transport := range []string{load.HTTP, load.Stdio} {
		for _, impl := range servers.Impls {
			t.Run(transport+"/"+impl, func(t *testing.T) {
				t.Parallel()
				p, err := load.Start(argv, impl, transport)
				if err != nil {
					t.Fatal(err)
				}
				defer func(p *load.Proc) {
					if err := p.Stop(); err != nil {
						t.Error(err)
					}
				}(p)
				if p.FirstDiscover <= 0 {
					t.Errorf("FirstDiscover = %v, want > 0", p.FirstDiscover)
				}
				opt := base
				opt.CPU = p.CPU
				for _, method := range load.AllMethods {
					if method == load.LegacyCall {
						// On a fresh process, as benchall does: a stdio
						// connection that spoke the modern era may refuse
						// initialize, and the peers serve legacy HTTP
						// clients in their stateful mode only.
						lp, err := load.StartLegacy(argv, impl, transport)
						if err != nil {
							t.Fatal(err)
						}
						defer lp.Stop()
						p = lp // PeakRSS and CPU below are then the legacy process's
					}
					for _, n := range levels {
						var r load.Result
						if transport == load.HTTP {
							r = load.RunHTTP(p.URL, impl, method, n, opt)
						} else {
							r = p.Stdio.RunStdio(impl, method, n, opt)
						}
						if r.Err != nil || r.Checked == 0 {
							t.Errorf("%s at %d: %d responses checked, error %v", method, n, r.Checked, r.Err)
						}
					}
				}
				if rss, err := p.PeakRSS(); err != nil || rss <= 0 {
					t.Errorf("PeakRSS() = %d, %v; want > 0", rss, err)
				}
				if cpu, err := p.CPU(); err != nil || cpu <= 0 {
					t.Errorf("CPU() = %v, %v; want > 0", cpu, err)
				}
			})
		}
	}
}

func TestInProcessAnswers(t *testing.T) {
	for _, impl := range servers.Impls {
		for _, method := range load.Methods {
			p, err := load.NewInProcess(impl, method)
			if err != nil {
				t.Fatalf("%s %s: %v", impl, method, err)
			}
			for range 3 {
				if err := p.Serve(); err != nil {
					t.Fatalf("%s %s: %v", impl, method, err)
				}
			}
		}
	}
}

// TestWrongAnswersFail checks that the harness reports a server that
// answers wrongly as failing: here the HTTP floor, which sends a fixed body,
// measured as if it were an MCP server.
func TestWrongAnswersFail(t *testing.T) {
	srv := httptest.NewServer(servers.FloorHandler{})
	defer srv.Close()
	for _, method := range load.Methods {
		r := load.RunHTTP(srv.URL+servers.Path, servers.Mcpkit, method, 2, load.Options{Duration: 50 * time.Millisecond})
		if r.Err == nil {
			t.Errorf("%s: floor measured as mcpkit passed the checks, want a failure", method)
		}
	}
}

func TestCheckDeep(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench-server","version":"1.0.0"}}`
	discover := func(fields string) string {
		return `{"jsonrpc":"2.0","id":7,"result":{` + fields + `}}`
	}
	const goodDiscover = `"resultType":"complete","ttlMs":3600000,"cacheScope":"public","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"instructions":"A benchmark server with one tool, echo, that returns its text.",` + meta
	tests := []struct {
		name, method, resp string
		wantErr            string // "" for no error
	}{
		{"discover ok", load.Discover, discover(goodDiscover), ""},
		{"discover without serverInfo", load.Discover, discover(strings.Replace(goodDiscover, ","+meta, "", 1)), ""},
		{"wrong id", load.Discover, strings.Replace(discover(goodDiscover), `"id":7`, `"id":8`, 1), "id is 8"},
		{"no ttl", load.Discover, discover(strings.Replace(goodDiscover, `"ttlMs":3600000,`, "", 1)), "ttlMs"},
		{"private", load.Discover, discover(strings.Replace(goodDiscover, `"public"`, `"private"`, 1)), "cacheScope"},
		{"old version only", load.Discover, discover(strings.Replace(goodDiscover, `2026-07-28`, `2025-11-25`, 1)), "supportedVersions"},
		{"no tools", load.Discover, discover(strings.Replace(goodDiscover, `"tools":{}`, ``, 1)), "tools"},
		{"wrong server name", load.Discover, discover(strings.Replace(goodDiscover, `bench-server`, `x`, 1)), "serverInfo"},
		{"error", load.Discover, `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}`, "error response"},
		{"call ok", load.Call, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"}]}}`, ""},
		{"call isError", load.Call, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","isError":true,"content":[{"type":"text","text":"hello"}]}}`, "isError"},
		{"call wrong text", load.Call, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"hellO"}]}}`, "content[0]"},
		{"call two items", load.Call, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"},{"type":"text","text":"hello"}]}}`, "2 items"},
		{"call no resultType", load.Call, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}]}}`, "resultType"},
		{"not JSON", load.Call, `{"jsonrpc":`, "not JSON"},
	}
	for _, tt := range tests {
		err := load.CheckDeep(servers.Mcpkit, load.HTTP, tt.method, []byte(tt.resp), 7)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one mentioning %q", tt.name, err, tt.wantErr)
		}
	}
}

func BenchmarkServeHTTP(b *testing.B) {
	for _, method := range load.Methods {
		for _, impl := range servers.Impls {
			b.Run(strings.ReplaceAll(method, "/", "_")+"/"+impl, func(b *testing.B) {
				p, err := load.NewInProcess(impl, method)
				if err != nil {
					b.Fatal(err)
				}
				p.Benchmark(b)
			})
		}
	}
}

// TestSlicesTakeTurns drives two implementations slice by slice, as
// benchall does, and checks that a paused load sends nothing.
func TestSlicesTakeTurns(t *testing.T) {
	for _, transport := range []string{load.HTTP, load.Stdio} {
		t.Run(transport, func(t *testing.T) {
			var drivers []*load.Driver
			var ends []func() // each ends a server once it has read all it was sent
			served := map[string]*atomic.Int64{}
			for _, impl := range []string{servers.Mcpkit, servers.Floor} {
				served[impl] = &atomic.Int64{}
				var d *load.Driver
				var err error
				if transport == load.HTTP {
					h, herr := servers.HTTPHandler(impl)
					if herr != nil {
						t.Fatal(herr)
					}
					n := served[impl]
					srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						n.Add(1)
						h.ServeHTTP(w, r)
					}))
					defer srv.Close()
					ends = append(ends, srv.Close) // waits for the requests in progress
					d, err = load.NewHTTPDriver(srv.URL+servers.Path, impl, load.Call, 4, nil)
				} else {
					inR, inW := io.Pipe()
					outR, outW := io.Pipe()
					done := make(chan struct{})
					go func() {
						defer close(done)
						servers.ServeStdio(context.Background(), impl, countingReader{inR, served[impl]}, outW)
						outW.Close()
					}()
					end := func() { inW.Close(); <-done } // ServeStdio read all input
					defer end()
					ends = append(ends, end)
					d, err = load.NewStdioClient(inW, outR, func() { outR.CloseWithError(errors.New("stalled")) }).Driver(impl, load.Call, 4, nil)
				}
				if err != nil {
					t.Fatal(err)
				}
				drivers = append(drivers, d)
			}
			// Measure's slices are wall-clock windows (it measures
			// throughput): a 20 ms one may count nothing on a loaded machine
			// under -race, so the check that the load ran is over each
			// driver's three slices.
			counted := make([]int64, len(drivers))
			for range 3 {
				for i, d := range drivers {
					r := d.Measure(5*time.Millisecond, 20*time.Millisecond)
					if r.Err != nil {
						t.Fatalf("driver %d: %d requests, error %v", i, r.Requests, r.Err)
					}
					counted[i] += r.Requests
				}
			}
			for i, n := range counted {
				if n == 0 {
					t.Fatalf("driver %d: no request in three slices", i)
				}
			}
			// Every driver is paused now: the servers see nothing more, up
			// to the end. Not a pause to see whether something comes: Close
			// wakes every paused load goroutine and waits until each has
			// returned, and ending a server waits until it has read
			// everything sent to it, so once both are done, any request the
			// paused load sent was counted.
			before := map[string]int64{}
			for impl, n := range served {
				before[impl] = n.Load()
			}
			for i, d := range drivers {
				if err := d.Close(); err != nil {
					t.Errorf("driver %d: Close: %v", i, err)
				}
			}
			for _, end := range ends {
				end()
			}
			for impl, n := range served {
				if got := n.Load(); got != before[impl] {
					t.Errorf("%s got %d requests while its load was paused", impl, got-before[impl])
				}
			}
		})
	}
}

// countingReader counts the newlines read through it: requests, on stdio.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(bytes.Count(p[:n], []byte{'\n'})))
	return n, err
}

// TestIdleListenStreams opens a few idle listen streams on every
// implementation and checks their acknowledgments.
func TestIdleListenStreams(t *testing.T) {
	argv := serverArgv(t)
	for _, impl := range servers.Impls {
		t.Run(impl, func(t *testing.T) {
			t.Parallel()
			if _, err := load.IdleListenMemory(argv, impl, 5); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFanout opens a few listen streams on every implementation, triggers
// two tool list changes and checks that every listener received each one
// (method and subscriptionId checked by MeasureFanout); the floor has no
// list to change.
func TestFanout(t *testing.T) {
	argv := serverArgv(t)
	for _, impl := range servers.Impls {
		t.Run(impl, func(t *testing.T) {
			t.Parallel()
			fs, err := load.MeasureFanout(argv, impl, 20, 2)
			if impl == servers.Floor {
				if !errors.Is(err, load.ErrNoFanout) {
					t.Fatalf("floor: error %v, want ErrNoFanout", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) != 2 {
				t.Fatalf("%d fan-outs measured, want 2", len(fs))
			}
			for _, f := range fs {
				if f.Latency <= 0 || f.First > f.Latency {
					t.Errorf("fan-out %+v: want 0 < First <= Latency", f)
				}
			}
		})
	}
}
