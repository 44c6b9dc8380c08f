// Command mcpkit is the mcpkit command-line tool.
//
//	mcpkit serve [--addr HOST:PORT] [--stdio]   run the demo MCP server
//	mcpkit serve --auth-issuer URL [--auth-scopes S]   ... behind an OAuth authorization server
//	mcpkit serve --auth-issuer URL [--auth-scopes S]   ... behind an OAuth authorization server
//
// Run `mcpkit help` for details. This build has no Redis support, which
// keeps go-redis out of the core module; the build in the nested module
// (github.com/mcpkit/mcpkit/redis/cmd/mcpkit) is the same command with
// `mcpkit serve --redis URL`.
package main

import (
	"os"

	"github.com/mcpkit/mcpkit/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, nil))
}
