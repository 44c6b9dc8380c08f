// Command benchserver runs one implementation of the benchmark server as its
// own process, so that a load generator can measure it from outside: its CPU
// time, its peak memory and how long it takes to answer its first request.
//
//	benchserver -impl mcpkit|gosdk|mcpgo|floor -transport http|stdio [-addr 127.0.0.1:0]
//
// Over HTTP it prints the endpoint URL (http://127.0.0.1:PORT/mcp) as the
// first line on stdout once it listens, and it exits when stdin ends or on
// SIGINT/SIGTERM, so that it never outlives the process that started it. Over
// stdio, stdin and stdout carry the protocol and it exits at the end of
// stdin.
package main

import (
	"fmt"
	"os"

	"github.com/mcpkit/mcpkit/bench/servers"
)

func main() {
	if err := servers.Main(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchserver:", err)
		os.Exit(1)
	}
}
