package servers

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"
)

// Main is the benchserver command: it parses args (without the program
// name) and serves until stdin ends or the process is signalled. Over HTTP
// it prints the endpoint URL as the first line on stdout once it listens.
func Main(args []string) error {
	fs := flag.NewFlagSet("benchserver", flag.ContinueOnError)
	impl := fs.String("impl", Mcpkit, "implementation: mcpkit, gosdk, mcpgo or floor")
	transport := fs.String("transport", "http", "transport: http or stdio")
	addr := fs.String("addr", "127.0.0.1:0", "HTTP listen address")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	memprofile := fs.String("memprofile", "", "write an allocation profile to this file at exit")
	fs.BoolVar(&Touch, "touch", false, "also register the touch tool (the fan-out case)")
	fs.IntVar(&BurnIters, "burn-iters", BurnIters, "rounds of the burn tool's loop per call (bench/overload.sh calibrates it to about 1 ms)")
	fs.IntVar(&MaxInFlight, "max-inflight", 0, "mcpkit: Quotas.MaxInFlightRequests (0: its default, -1: no limit); the peers have none")
	fs.BoolVar(&FixedInFlight, "fixed-inflight", false, "mcpkit: the adaptive in-flight limit off (Quotas.MaxQueueDelay Off)")
	fs.BoolVar(&Stateful, "stateful", false, "peers: stateful Streamable HTTP with sessions (the legacy HTTP case)")
	fs.StringVar(&RedisURL, "redis", "", "mcpkit: share change notifications with the other replicas through the Redis at this redis:// `URL`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := setupRedis(*impl); err != nil {
		return err
	}
	return run(*impl, *transport, *addr, *cpuprofile, *memprofile)
}

func run(impl, transport, addr, cpuprofile, memprofile string) error {
	if memprofile != "" {
		runtime.MemProfileRate = 4096
	}
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if memprofile != "" {
		defer func() {
			f, err := os.Create(memprofile)
			if err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch transport {
	case "stdio":
		return ServeStdio(ctx, impl, os.Stdin, os.Stdout)
	case "http":
	default:
		return fmt.Errorf("unknown transport %q", transport)
	}
	h, err := HTTPHandler(impl)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	fmt.Printf("http://%s%s\n", ln.Addr(), Path)
	// Stop when stdin ends: the parent went away or closed our stdin.
	go func() {
		io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
