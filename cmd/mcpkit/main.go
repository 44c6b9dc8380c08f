// Command mcpkit is the mcpkit command-line tool.
//
//	mcpkit serve [--addr HOST:PORT] [--stdio]          run the demo MCP server
//	mcpkit serve --auth-issuer URL [--auth-scopes S]   ... behind an OAuth authorization server
//	mcpkit discover [flags] URL                        probe an MCP server over HTTP
//	mcpkit discover [flags] -- COMMAND ARGS...         probe a stdio MCP server
//
// Run `mcpkit help` for details. The command lives in internal/cli. This
// build has no Redis support, which keeps go-redis out of the core module;
// the build of the nested module (github.com/mcpkit/mcpkit/redis/cmd/mcpkit)
// is the same command with `mcpkit serve --redis URL`.
package main

import (
	"os"

	"github.com/mcpkit/mcpkit/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, nil))
}
