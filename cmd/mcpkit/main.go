// Command mcpkit is the mcpkit command-line tool.
//
//	mcpkit serve [--addr HOST:PORT] [--stdio]          run the demo MCP server
//	mcpkit serve --auth-issuer URL [--auth-scopes S]   ... behind an OAuth authorization server
//	mcpkit discover [flags] URL                        probe an MCP server over HTTP
//	mcpkit discover [flags] -- COMMAND ARGS...         probe a stdio MCP server
//
// Run `mcpkit help` for details.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `mcpkit: tools for Model Context Protocol servers (revision 2026-07-28)

Usage:
  mcpkit serve [flags]     run the demo server (Streamable HTTP, or stdio with --stdio)
  mcpkit discover URL      probe any MCP server: its era, versions, capabilities
  mcpkit discover -- CMD   the same for a stdio server (spawns CMD)
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
	case "discover":
		return discover(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "mcpkit: unknown command %q\n\n%s", args[0], usage)
	return 2
}
