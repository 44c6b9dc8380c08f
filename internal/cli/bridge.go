package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/clip"
	"github.com/mcpkit/mcpkit/mcp"
)

// bridgeCommand is `mcpkit bridge`: a backend server (a command after --,
// or a URL) served as a 2026-07-28 endpoint.
var bridgeCommand = &Command{
	UsageLine: "bridge [flags] -- CMD [ARGS...]\nbridge [flags] URL",
	Short:     "serve any MCP server (a stdio command or a URL, either era) as a 2026-07-28 endpoint",
	Long: `Serves an MCP server of either era as a revision 2026-07-28 endpoint (and to
legacy clients too, as --era says): a stdio command after --, spawned and
supervised (restarted with backoff when it exits; its stderr goes to the log,
tagged), or a Streamable HTTP or HTTP+SSE URL. server/discover comes from the
backend's initialize; backend sessions are keyed by the caller's client
capabilities; a backend's sampling, elicitation and roots requests become
input_required rounds. See docs/bridge.md.
`,
	Flag:   bridgeFlags,
	Exits:  exitsServe,
	Failed: "the bridge failed: the backend did not start, or it cannot listen, or serving failed",
}

func bridgeFlags(fs *flag.FlagSet) Runner {
	front := registerFront(fs)
	maxSessions := fs.Int("max-sessions", 0, "cap on the backend sessions (processes, for a command) over all capability keys (0: 16)")
	maxListen := fs.Int("max-listen-streams", 0, "cap on the listen streams opened on a modern backend for the front's listeners, over all keys (0: 1024)")
	holdTimeout := fs.Duration("hold-timeout", 0, "how long a backend call waits for the retry that answers its input requests (0: 60s)")
	pingInterval := fs.Duration("ping-interval", 0, "how often the backend is pinged (always on the probe session, while calls are in flight on the others) to find one that stops answering (0: 10s; negative: never)")
	pingTimeout := fs.Duration("ping-timeout", 0, "how long a ping waits for the backend's answer before the backend is ended and restarted (0: 5s)")
	backendEra := fs.String("backend-era", "auto", "the backend's era: auto (find out), modern or legacy (initialize even if it answers server/discover)")
	advertise := fs.String("advertise-url", "", "this replica's MCP `URL` as the other replicas reach it: a retry that lands on another replica is forwarded here")
	extensions := fs.String("extensions", "", "comma-separated client `EXTENSIONS` that reach the backend and key its sessions")
	isolate := fs.String("isolate", "none", "which callers share a backend: none (callers with the same capabilities) or principal (a backend per authenticated\ncaller, whose list changes and resource updates reach that caller only; needs --auth-issuer)")
	var headers headerFlags
	fs.Var(&headers, "header", "`NAME:VALUE` header sent to a URL backend (repeatable)")
	tasks := taskSupportFlag{v: mcp.TaskNone}
	fs.Var(&tasks, "tasks", "whether a tools/call may run as a task of the front's tasks extension (the backend knows nothing of it): `none`, optional or required")
	var taskTools taskToolsFlag
	fs.Var(&taskTools, "task-tool", "`NAME=MODE[,input-starts-task]`: the task support of one tool (MODE none, optional or required), in place of --tasks; with input-starts-task, a backend request for input before the call became a task starts the task, which waits in input_required (repeatable)")
	return func(inv *invocation) int {
		ctx, stop := signal.NotifyContext(inv.ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		log := slog.New(slog.NewTextHandler(inv.stderr, nil))
		var backend func() client.Transport
		switch {
		case inv.dash && len(inv.args) == 0 && len(inv.command) > 0:
			argv := inv.command
			backend = func() client.Transport {
				return &client.CommandTransport{Command: argv[0], Args: argv[1:], Stderr: &stderrLog{log: log, cmd: argv[0]}}
			}
		case !inv.dash && len(inv.args) == 1:
			u := inv.args[0]
			if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
				return inv.usageError("%q is not an http(s) URL; a command goes after --", u)
			}
			backend = func() client.Transport { return &client.HTTPTransport{URL: u, Header: headers.h} }
		default:
			return inv.usageError("want -- CMD [ARGS...] or one URL")
		}
		era := client.AnyEra
		switch *backendEra {
		case "auto":
		case "modern":
			era = client.ModernOnly
		case "legacy":
			era = client.LegacyOnly
		default:
			return inv.usageError("--backend-era %q: want auto, modern or legacy", *backendEra)
		}
		var iso bridge.Isolation
		switch *isolate {
		case "none":
		case "principal":
			if front.stdio {
				return inv.usageError("--isolate principal: a --stdio front has one caller and no authentication")
			}
			if !front.auth.any() {
				return inv.usageError("--isolate principal needs authenticated callers: give --auth-issuer")
			}
			iso = bridge.IsolatePrincipal
		default:
			return inv.usageError("--isolate %q: want none or principal", *isolate)
		}
		if *maxSessions < 0 || *maxListen < 0 || *holdTimeout < 0 || *pingTimeout < 0 {
			return inv.usageError("--max-sessions, --max-listen-streams, --hold-timeout and --ping-timeout cannot be negative")
		}
		if *pingInterval < 0 {
			*pingInterval = mcp.Off
		}
		var exts []string
		for _, e := range strings.Split(*extensions, ",") {
			if e = strings.TrimSpace(e); e != "" {
				exts = append(exts, e)
			}
		}
		opts, closeFront, err := front.ServerOptions(ctx, log, inv.stderr)
		if err != nil {
			return inv.fail(err)
		}
		defer closeFront()
		var b *bridge.Bridge
		defer func() {
			if b != nil {
				b.Close() // ends the backends
			}
		}()
		newServer := func(o *mcp.ServerOptions) (*mcp.Server, error) {
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			var err error
			b, err = bridge.New(sctx, &bridge.Options{Backend: backend, Eras: era, Server: *o, Logger: log, Extensions: exts,
				Isolate: iso, Interceptors: front.backendInterceptors, MaxSessions: *maxSessions, MaxListenStreams: *maxListen, HoldTimeout: *holdTimeout, AdvertiseURL: *advertise,
				PingInterval: *pingInterval, PingTimeout: *pingTimeout,
				Tasks: tasks.v, TaskTools: taskTools.m})
			if err != nil {
				return nil, err
			}
			return b.Server(), nil
		}
		return front.run(ctx, inv, log, "bridge", opts, newServer)
	}
}

// stderrLog logs a backend's stderr, line by line, tagged with its
// command. It never reaches a caller.
// maxStderrLine bounds one logged line of a backend's stderr.
const maxStderrLine = 4 << 10

type stderrLog struct {
	log     *slog.Logger
	cmd     string
	partial []byte
}

func (w *stderrLog) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.log.Info("backend stderr", "cmd", w.cmd, "line", clip.String(string(bytes.TrimRight(w.partial[:i], "\r")), maxStderrLine))
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) > 64<<10 { // a very long line: its start is logged, the rest dropped
		w.log.Info("backend stderr", "cmd", w.cmd, "line", clip.String(string(w.partial), maxStderrLine))
		w.partial = nil
	}
	return len(p), nil
}

// taskSupportFlag is --tasks: none, optional or required.
type taskSupportFlag struct{ v mcp.TaskSupport }

func (f *taskSupportFlag) String() string { return f.v.String() }

func (f *taskSupportFlag) Set(v string) error { return f.v.UnmarshalText([]byte(v)) }

// taskToolsFlag is --task-tool NAME=MODE[,input-starts-task], repeatable.
type taskToolsFlag struct{ m map[string]bridge.TaskTool }

func (f *taskToolsFlag) String() string { return "" }

func (f *taskToolsFlag) Set(v string) error {
	name, mode, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=none|optional|required[,input-starts-task], got %q", v)
	}
	var t bridge.TaskTool
	if err := t.UnmarshalText([]byte(mode)); err != nil {
		return err
	}
	if f.m == nil {
		f.m = map[string]bridge.TaskTool{}
	}
	f.m[name] = t
	return nil
}
