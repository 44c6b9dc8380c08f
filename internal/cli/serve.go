package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/internal/demo"
	"github.com/mcpkit/mcpkit/mcp"
)

// shutdownTimeout bounds how long in-flight requests may run after a
// signal.
const shutdownTimeout = 10 * time.Second

// serveCommand is `mcpkit serve`.
var serveCommand = &Command{
	UsageLine: "serve [flags]",
	Short:     "run the demo server (Streamable HTTP, or stdio with --stdio)",
	Long: `Runs the mcpkit demo MCP server: tools, prompts, resources and Agent Skills
that show what the SDK does, on Streamable HTTP at --addr and --path, or on
stdin and stdout with --stdio. It serves revision 2026-07-28 and the legacy
revisions 2025-11-25 to 2024-11-05 (--era chooses), stops gracefully on
SIGINT or SIGTERM (listen streams end with their result first), and logs to
stderr.
`,
	Flag:   serveFlags,
	Exits:  exitsServe,
	Failed: "the server failed: it cannot listen, or serving or shutting down failed",
}

// serveFlags registers the flags of `mcpkit serve`: the front flags
// (front.go) and the demo's own.
func serveFlags(fs *flag.FlagSet) Runner {
	front := registerFront(fs)
	fixtures := fs.Bool("fixtures", false, "also serve the fixtures of the MCP conformance suite (the test_* tools, prompts and resources); scripts/test.sh turns it on")
	whoamiScopes := fs.String("auth-whoami-scopes", "", "`SCOPES` the whoami tool needs on top of --auth-scopes (a call without them gets 403 insufficient_scope: try step-up authorization)")
	var skillsOpts skillsFlags
	skillsOpts.register(fs)
	return func(inv *invocation) int {
		if len(inv.args) > 0 || inv.dash {
			return inv.usageError("takes no arguments (got %q)", append(inv.args, inv.command...))
		}
		if *whoamiScopes != "" && front.stdio {
			return inv.usageError("the --auth-* flags apply to HTTP only; a stdio server takes its credentials from its environment")
		}
		if *whoamiScopes != "" && front.auth.issuer == "" {
			return inv.usageError("the --auth-* flags need --auth-issuer")
		}
		ctx, stop := signal.NotifyContext(inv.ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		log := slog.New(slog.NewTextHandler(inv.stderr, nil))
		opts, closeFront, err := front.ServerOptions(ctx, log, inv.stderr)
		if err != nil {
			return inv.fail(err)
		}
		defer closeFront()
		opts.Info.Name, opts.Info.Version = demo.Name, demo.Version
		newServer := func(o *mcp.ServerOptions) (*mcp.Server, error) {
			newDemo := demo.NewPlain
			if *fixtures {
				newDemo = demo.New
			}
			s := newDemo(o)
			if sc := splitScopes(*whoamiScopes); len(sc) > 0 {
				demo.AddWhoami(s, sc...)
			}
			if err := skillsOpts.apply(s, log); err != nil {
				return nil, &exitError{code: exitUsage, err: err}
			}
			return s, nil
		}
		return front.run(ctx, inv, log, "serve", opts, newServer)
	}
}

// serveContext runs `mcpkit serve` with args until ctx is cancelled (or a
// signal comes).
func serveContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runCommand(ctx, serveCommand, args, stdin, stdout, stderr)
}

// stateKeys reads the requestState keys from file, or from the
// environment when file is empty (nil when neither has any).
func stateKeys(file string) ([][]byte, error) {
	if file == "" {
		v := os.Getenv(mcp.StateKeysEnv)
		if strings.TrimSpace(v) == "" {
			return nil, nil
		}
		keys, err := mcp.ParseStateKeys(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mcp.StateKeysEnv, err)
		}
		return keys, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	keys, err := mcp.ParseStateKeys(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return keys, nil
}
