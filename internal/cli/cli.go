// Package cli is the mcpkit command-line tool, as a library: cmd/mcpkit
// (core module) and full/cmd/mcpkit (the nested module that adds Redis,
// `serve --redis`, and OpenTelemetry) both call Run. See cmd/mcpkit for the commands.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

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

// commands is the table of mcpkit commands, in the order help lists them.
// It is filled in init: helpCommand refers to it.
var commands []*Command

func init() {
	commands = []*Command{
		serveCommand,
		bridgeCommand,
		discoverCommand,
		clientCmd(callCommand),
		clientCmd(readCommand),
		clientCmd(promptCommand),
		clientCmd(toolsCommand),
		clientCmd(resourcesCommand),
		clientCmd(promptsCommand),
		clientCmd(skillsCommand),
		appsCommand,
		logoutCommand,
		versionCommand,
		helpCommand,
	}
}

// lookup returns the command named name, or nil.
func lookup(name string) *Command {
	for _, c := range commands {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeMainUsage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "--version":
		name = "version"
	case "-h", "-help", "--help":
		name = "help"
	}
	cmd := lookup(name)
	if cmd == nil {
		fmt.Fprintf(stderr, "mcpkit: unknown command %q\n\n", args[0])
		writeMainUsage(stderr)
		return exitUsage
	}
	return runCommand(context.Background(), cmd, args[1:], stdin, stdout, stderr)
}

// helpCommand is `mcpkit help [COMMAND]`.
var helpCommand = &Command{
	UsageLine: "help [COMMAND]",
	Short:     "show this help, or the help of COMMAND (the same as mcpkit COMMAND -h)",
	Flag: func(fs *flag.FlagSet) Runner {
		return func(inv *invocation) int {
			switch {
			case len(inv.args) == 0 && !inv.dash:
				writeMainUsage(inv.stdout)
				return exitOK
			case len(inv.args) > 1 || inv.dash:
				return inv.usageError("one command at a time")
			}
			cmd := lookup(inv.args[0])
			if cmd == nil {
				fmt.Fprintf(inv.stderr, "mcpkit help: unknown command %q\n\n", inv.args[0])
				writeMainUsage(inv.stderr)
				return exitUsage
			}
			fs := newFlagSet(cmd)
			cmd.Flag(fs)
			writeUsage(inv.stdout, cmd, fs)
			return exitOK
		}
	},
	Exits: []int{exitOK, exitUsage},
}

// mainUsageHead is the first line of `mcpkit help`.
const mainUsageHead = "mcpkit: tools for Model Context Protocol servers (revision 2026-07-28)\n"

// writeMainUsage writes `mcpkit help`: every command's usage lines and
// short description, and the exit codes.
func writeMainUsage(w io.Writer) {
	fmt.Fprintf(w, "%s\n%s", mainUsageHead, commandList())
	fmt.Fprintf(w, "\nRun \"mcpkit help COMMAND\" or \"mcpkit COMMAND -h\" for the flags of a command.\n\n%s", exitTable(nil, ""))
}

// commandList lists the commands, as in `mcpkit help` and the package doc.
func commandList() string {
	var b strings.Builder
	b.WriteString("Usage:\n")
	for _, c := range commands {
		lines := strings.Split(c.UsageLine, "\n")
		if len(lines[0]) > 34 {
			fmt.Fprintf(&b, "  mcpkit %s\n  %-41s %s\n", lines[0], "", c.Short)
		} else {
			fmt.Fprintf(&b, "  mcpkit %-34s %s\n", lines[0], c.Short)
		}
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "  mcpkit %s\n", l)
		}
	}
	return b.String()
}
