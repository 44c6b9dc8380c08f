// Package cli is the mcpkit command-line tool, as a library: the commands
// in cmd/mcpkit (core module) and redis/cmd/mcpkit (the nested Redis
// module) are both Run, the latter with a Bus that reaches Redis.
package cli

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/mcpkit/mcpkit/mcp"
)

// Options are what a build of the command adds to it. A nil *Options is
// the core build.
type Options struct {
	// Redis connects `mcpkit serve --redis URL` to a Bus on Redis. It
	// returns the Bus and a function that closes it. Nil means the build
	// has no Redis support and the flag is refused.
	Redis func(url string, log *slog.Logger) (bus mcp.Bus, closeBus func(), err error)
}

const usage = `mcpkit: tools for Model Context Protocol servers (revision 2026-07-28)

Usage:
  mcpkit serve [flags]     run the demo server (Streamable HTTP, or stdio with --stdio)
  mcpkit help              show this help

Run "mcpkit COMMAND -h" for the flags of a command.
`

// Run runs the command with args (without the program name) and returns
// its exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer, opts *Options) int {
	if opts == nil {
		opts = &Options{}
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stdin, stdout, stderr, opts)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "mcpkit: unknown command %q\n\n%s", args[0], usage)
	return 2
}
