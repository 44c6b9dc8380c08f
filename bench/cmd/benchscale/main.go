// Command benchscale runs the long scale measurements that bench/run.sh
// leaves out: the listener curve of one server process (idle
// subscriptions/listen streams at each size: server RSS per stream, the
// idle process's CPU with keep-alive comments, and the delivery time of one
// tools/list_changed to every stream, p50 and p99). bench/scale.sh runs it.
//
// Every server is a benchserver process on 127.0.0.1 that this command
// starts and stops; every size is bounded (the streams it opens, the
// changes it triggers, a 30 s limit per change), so a run stops by itself.
// The output is a Markdown table with the date, the machine and the load
// average at the start and at the end, for BENCHMARKS.md.
//
// With -replicas N it measures N mcpkit replicas sharing one redis-server
// instead (replicas.go): -per-replica listen streams on each, a change
// made on one replica at a time, delivered to every stream of every
// replica.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/bench/load"
)

func main() {
	sizes := flag.String("sizes", "1000,5000,10000,19000", "comma-separated `LIST` of listen stream counts, each on a fresh server process")
	impls := flag.String("impls", "mcpkit", "comma-separated implementations (mcpkit, gosdk, mcpgo)")
	changes := flag.Int("changes", 5, "tool list changes triggered at each size (replicas mode: default 3 per replica)")
	idle := flag.Duration("idle", 35*time.Second, "idle window for the keep-alive CPU (more than two 15 s keep-alive intervals)")
	replicas := flag.Int("replicas", 0, "replicas mode (replicas.go): `N` mcpkit processes sharing one redis-server, -per-replica streams on each; -changes changes, made on the replicas in turn")
	perReplica := flag.Int("per-replica", 6000, "replicas mode: listen streams on each replica (the harness holds all of them: at most the open-file limit less 100)")
	redisBin := flag.String("redis-server", "", "replicas mode: the redis-server binary (default: redis-server on PATH)")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "benchscale")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	if *replicas > 0 {
		fmt.Printf("Run %s on %s/%s, %d CPUs, %s; load average at start: %s\n\n",
			time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), load.LoadAverage())
		n := 3 * *replicas // default: three changes made on each replica
		flag.Visit(func(f *flag.Flag) {
			if f.Name == "changes" {
				n = *changes
			}
		})
		if err := runReplicas(tmp, *redisBin, *replicas, *perReplica, n); err != nil {
			os.RemoveAll(tmp)
			fatal(err)
		}
		return
	}
	fmt.Printf("Run %s on %s/%s, %d CPUs, %s; load average at start: %s\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), load.LoadAverage())
	fmt.Println("| impl | streams | RSS per stream | idle CPU (share of one core) | list_changed p50 | p99 | max | server CPU per change | load average after |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, impl := range strings.Split(*impls, ",") {
		bin := filepath.Join(tmp, "benchserver-"+impl)
		build := exec.Command("go", "build", "-tags", "only_"+impl, "-o", bin, "./cmd/benchserver")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fatal(fmt.Errorf("building benchserver: %w", err))
		}
		for _, f := range strings.Split(*sizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				fatal(fmt.Errorf("-sizes: %q is not a positive count", f))
			}
			r, err := load.MeasureListenScale([]string{bin, "-impl", impl}, impl, n, *changes, *idle)
			if err != nil {
				fmt.Printf("| %s | %d | failed: %v | | | | | | %s |\n", impl, n, err, load.LoadAverage())
				continue
			}
			fmt.Printf("| %s | %d | %.1f KiB | %.2f%% | %s | %s | %s | %s | %s |\n", impl, n, float64(r.RSSPerStream)/1024,
				100*r.IdleCPU, ms(r.P50), ms(r.P99), ms(r.Max), ms(r.ChangeCPU), load.LoadAverage())
		}
	}
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) + " ms" }

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchscale:", err)
	os.Exit(1)
}
