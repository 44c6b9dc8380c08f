package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/bench/load"
)

// runReplicas is the replicas mode (-replicas N): one redis-server, N
// mcpkit benchserver processes sharing it through the Redis bus, perReplica
// listen streams on each, changes tool list changes made on the replicas
// in turn. It prints two Markdown tables: the delivery times over every
// stream, and each replica's figures.
func runReplicas(tmp, redisBin string, replicas, perReplica, changes int) error {
	if redisBin == "" {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			return fmt.Errorf("-replicas needs redis-server (Debian package redis-server), or -redis-server PATH: %w", err)
		}
		redisBin = bin
	}
	bin := filepath.Join(tmp, "benchserver-mcpkit")
	build := exec.Command("go", "build", "-tags", "only_mcpkit", "-o", bin, "./cmd/benchserver")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building benchserver: %w", err)
	}
	r, err := load.StartRedis(redisBin)
	if err != nil {
		return err
	}
	defer r.Stop()
	// An interrupted run stops Redis too (the benchservers exit when their
	// stdin, a pipe from this process, ends).
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		if _, ok := <-sig; ok {
			r.Stop()
			os.RemoveAll(tmp)
			os.Exit(1)
		}
	}()
	ver, _ := exec.Command(redisBin, "--version").Output()
	fmt.Printf("%d mcpkit replicas sharing one redis-server (%s), %d listen streams on each, %d changes made on the replicas in turn.\n\n",
		replicas, trimVersion(ver), perReplica, changes)
	fmt.Println("| replicas | streams | list_changed p50 | p99 | max | p99 on the changed replica | p99 on the others | first on the changed replica / on the others (median) | touch to Redis (median) | Redis PING | streams opened in | load average after |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	t0 := time.Now()
	s, err := load.MeasureReplicas([]string{bin, "-impl", "mcpkit"}, r, replicas, perReplica, changes)
	if err != nil {
		fmt.Printf("| %d | %d | failed: %v | | | | | | | | | %s |\n", replicas, replicas*perReplica, strings.ReplaceAll(err.Error(), "\n", " / "), load.LoadAverage())
		return err
	}
	fmt.Printf("| %d | %d | %s | %s | %s | %s | %s | %s / %s | %s | %s | %.1f s | %s |\n\n", replicas, replicas*perReplica,
		ms(s.P50), ms(s.P99), ms(s.Max), ms(s.Local.P99), ms(s.Remote.P99), ms(s.LocalFirst), ms(s.RemoteFirst), ms(s.RedisHop), us(s.RedisRTT),
		s.Open.Seconds(), load.LoadAverage())
	fmt.Println("| replica | RSS per stream | p50 / p99, changes made here | p50 / p99, changes made elsewhere | CPU per change (median) |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: |")
	for i, f := range s.Replica {
		fmt.Printf("| %d | %.1f KiB | %s / %s | %s / %s | %s |\n", i+1, float64(f.RSSPerStream)/1024,
			ms(f.Local.P50), ms(f.Local.P99), ms(f.Remote.P50), ms(f.Remote.P99), ms(f.CPUPerChange))
	}
	fmt.Println("\nPer change (from sending the touch): replica, touch answered, seen on Redis, first stream on the changed replica / on another, last stream:")
	for k, c := range s.PerChange {
		fmt.Printf("  %d. replica %d: %s, %s, %s / %s, %s\n", k+1, c.Replica, ms(c.Answered), ms(c.Redis), ms(c.LocalFirst), ms(c.RemoteFirst), ms(c.Last))
	}
	fmt.Printf("\nThe harness's own CPU per change (reading and checking every notification): %s.\n", ms(s.HarnessCPUPerChange))
	fmt.Printf("Whole run: %.0f s.\n", time.Since(t0).Seconds())
	return nil
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/1e3) }

// trimVersion keeps "Redis server v=X.Y.Z" of redis-server --version.
func trimVersion(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), " sha=")
	return s
}
