// Package cli is the mcpkit command-line tool, as a library: cmd/mcpkit
// (core module) and full/cmd/mcpkit (the nested module that adds Redis,
// `serve --redis`, and OpenTelemetry) both call Run. See cmd/mcpkit for the commands.
package cli

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/mcpkit/mcpkit/mcp"
)

// Options are what a build of the command adds to it.
type Options struct {
	// Redis connects `mcpkit serve --redis URL` to Redis: it sets the Bus
	// for change notifications, the task store and the legacy session
	// store in opts, all on Redis, and returns a function that closes
	// them. Nil (the core build) refuses the flag.
	Redis func(url string, log *slog.Logger, opts *mcp.ServerOptions) (closeAll func(), err error)
	// Telemetry configures OpenTelemetry for `mcpkit serve` from the
	// OTEL_* environment variables (observe.go). Nil (the core build)
	// means none.
	Telemetry Telemetry
}

// build is what Run was given; the zero value is the core build.
var build Options

// Run runs the command with args (without the program name) and returns
// its exit code. o may be nil. Call it once per process.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer, o *Options) int {
	if o != nil {
		build = *o
	}
	return run(args, stdin, stdout, stderr)
}

const usage = `mcpkit: tools for Model Context Protocol servers (revision 2026-07-28)

Usage:
  mcpkit serve [flags]     run the demo server (Streamable HTTP, or stdio with --stdio)
  mcpkit bridge [flags] -- CMD | URL   serve any MCP server (stdio command or URL, either era) as 2026-07-28
  mcpkit discover URL      probe any MCP server: its era, versions, capabilities
  mcpkit discover -- CMD   the same for a stdio server (spawns CMD)
  mcpkit call URL TOOL [JSON]       call a tool and print its result
  mcpkit read URL URI               read a resource
  mcpkit prompt URL NAME [JSON]     get a prompt
  mcpkit tools|resources|prompts URL   list what the server offers
  mcpkit skills URL [NAME [--save DIR]]  list the Agent Skills, show one, or download it verified
  mcpkit logout URL        forget the tokens --auth keeps for a server
                           (for a stdio server, leave out URL and end with -- CMD)
  mcpkit version           the mcpkit version, commit and Go version of this binary
  mcpkit help              show this help

Run "mcpkit COMMAND -h" for the flags of a command.
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stdin, stdout, stderr)
	case "bridge":
		return bridgeCmd(args[1:], stdin, stdout, stderr)
	case "discover":
		return discover(args[1:], stdout, stderr)
	case "call":
		return call(args[1:], stdin, stdout, stderr)
	case "read":
		return read(args[1:], stdin, stdout, stderr)
	case "prompt":
		return prompt(args[1:], stdin, stdout, stderr)
	case "tools", "resources", "prompts":
		return listCmd(args[0], args[1:], stdin, stdout, stderr)
	case "skills":
		return skillsCmd(args[1:], stdin, stdout, stderr)
	case "logout":
		return logout(args[1:], stdout, stderr)
	case "version", "--version":
		return version(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "mcpkit: unknown command %q\n\n%s", args[0], usage)
	return 2
}
