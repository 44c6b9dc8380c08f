package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The exit codes of every mcpkit command: exitCodes says what each means,
// and `mcpkit help` and each command's help print the table from there.
const (
	exitOK           = 0
	exitFailed       = 1 // the command's own failure: see exitCodes
	exitUsage        = 2
	exitUnreachable  = 3
	exitNotMCP       = 4
	exitIncompatible = 5
	exitRPCError     = 6
	exitRequestFails = 7
	exitDidNotStart  = 8

	// exitToolError and exitCheckFailed are exitFailed in the words of
	// call and discover --check.
	exitToolError   = exitFailed
	exitCheckFailed = exitFailed
)

// exitCode is one row of the exit-code table.
type exitCode struct {
	code    int
	meaning string
}

// exitCodes is the one table of exit codes, in order.
var exitCodes = []exitCode{
	{exitOK, "ok"},
	{exitFailed, "call: the tool reported an error (isError: true), its content printed; discover --check: a check\nfailed; serve, logout: the command failed (cannot listen, cannot write the token file)"},
	{exitUsage, "usage error: bad flags or arguments"},
	{exitUnreachable, "unreachable: no connection, the command did not start, or no answer at all"},
	{exitNotMCP, "not MCP: something answered, but not as an MCP server of either era"},
	{exitIncompatible, "incompatible: an MCP server, but no protocol version in common"},
	{exitRPCError, "the server answered with a JSON-RPC error (unknown tool, invalid arguments, ...)"},
	{exitRequestFails, "the request failed after connecting (timeout, lost connection, malformed answer)"},
	{exitDidNotStart, "a stdio server exited before it answered any request (it crashed or refused to start);\nits exit status and the end of its stderr are printed"},
}

// Which exit codes the commands use.
var (
	exitsServe  = []int{exitOK, exitFailed, exitUsage}
	exitsClient = []int{exitOK, exitUsage, exitUnreachable, exitNotMCP, exitIncompatible, exitRPCError, exitRequestFails, exitDidNotStart}
	exitsCall   = []int{exitOK, exitToolError, exitUsage, exitUnreachable, exitNotMCP, exitIncompatible, exitRPCError, exitRequestFails, exitDidNotStart}
	exitsProbe  = []int{exitOK, exitCheckFailed, exitUsage, exitUnreachable, exitNotMCP, exitIncompatible, exitDidNotStart}
	exitsLocal  = []int{exitOK, exitFailed, exitUsage}
)

// exitTable formats the rows of exitCodes whose code is in codes (all of
// them when codes is nil) as the "Exit codes:" section of a help text;
// failed, when not empty, is the meaning of exit code 1.
func exitTable(codes []int, failed string) string {
	var b strings.Builder
	b.WriteString("Exit codes:\n")
	for _, e := range exitCodes {
		if codes != nil && !slices.Contains(codes, e.code) {
			continue
		}
		meaning := e.meaning
		if e.code == exitFailed && failed != "" {
			meaning = failed
		}
		lines := strings.Split(meaning, "\n")
		fmt.Fprintf(&b, "  %d  %s\n", e.code, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "     %s\n", l)
		}
	}
	return b.String()
}

// exitError is an error that ends a command with its exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitCodeOf is the exit code for err: its own for an *exitError, else
// exitFailed; exitOK for nil.
func exitCodeOf(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailed
}
