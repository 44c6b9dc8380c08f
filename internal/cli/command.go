package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Command is one mcpkit command, in the shape of the go command's
// base.Command: the table of them (commands) generates `mcpkit help`,
// `mcpkit help NAME`, `mcpkit NAME -h` and the package doc of cmd/mcpkit
// (doc.go, checked by TestPackageDoc), and runCommand parses every
// command's arguments the same way.
type Command struct {
	// UsageLine is the command's synopsis after "mcpkit ", its name
	// first; a command with several forms has one line each.
	UsageLine string
	// Short is the one-line description in the list of commands.
	Short string
	// Long is the description under the usage lines of the command's
	// help, in whole lines.
	Long string
	// Flag registers the command's flags on fs and returns the function
	// that runs the command with them once fs has parsed the arguments.
	// It is called afresh for every invocation (and for help), so that
	// no flag value outlives one.
	Flag func(fs *flag.FlagSet) Runner
	// Exits are the exit codes the command uses, rows of exitCodes.
	Exits []int
	// Failed is what exit code 1 means for this command, in its help
	// (the row of exitCodes says it for all of them).
	Failed string
}

// Runner runs a command whose flags have been parsed and returns its exit
// code.
type Runner func(inv *invocation) int

// Name is the command's name, the first word of UsageLine.
func (c *Command) Name() string {
	name, _, _ := strings.Cut(c.UsageLine, " ")
	return name
}

// invocation is one run of a command: its arguments, flags taken out, and
// its standard streams.
type invocation struct {
	ctx     context.Context
	cmd     *Command
	args    []string // the positional arguments before "--"
	command []string // the arguments after "--"
	dash    bool     // "--" was given
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
}

// usageError prints "mcpkit NAME: message", the command's usage lines and
// where its help is to stderr, and returns exitUsage.
func (inv *invocation) usageError(format string, a ...any) int {
	fmt.Fprintf(inv.stderr, "mcpkit %s: %s\n\n", inv.cmd.Name(), fmt.Sprintf(format, a...))
	writeUsageLines(inv.stderr, inv.cmd)
	fmt.Fprintf(inv.stderr, "Run \"mcpkit help %s\" for its flags and exit codes.\n", inv.cmd.Name())
	return exitUsage
}

// writeUsageLines writes the "Usage:" lines of cmd.
func writeUsageLines(w io.Writer, cmd *Command) {
	fmt.Fprint(w, "Usage:\n")
	for _, l := range strings.Split(cmd.UsageLine, "\n") {
		fmt.Fprintf(w, "  mcpkit %s\n", l)
	}
}

// fail prints "mcpkit NAME: err" to stderr and returns err's exit code.
func (inv *invocation) fail(err error) int {
	var ee *exitError
	if errors.As(err, &ee) && ee.code == exitUsage {
		return inv.usageError("%v", err)
	}
	fmt.Fprintf(inv.stderr, "mcpkit %s: %v\n", inv.cmd.Name(), err)
	return exitCodeOf(err)
}

// runCommand runs cmd with args (after its name). -h, -help and --help
// before any "--" print its help to stdout and exit 0.
func runCommand(ctx context.Context, cmd *Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet(cmd)
	run := cmd.Flag(fs)
	inv := &invocation{ctx: ctx, cmd: cmd, stdin: stdin, stdout: stdout, stderr: stderr}
	var err error
	inv.args, inv.command, inv.dash, err = parseArgs(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		writeUsage(stdout, cmd, fs)
		return exitOK
	case err != nil:
		return inv.usageError("%v", err)
	}
	return run(inv)
}

// newFlagSet is an empty flag set for cmd that reports nothing itself:
// runCommand does.
func newFlagSet(cmd *Command) *flag.FlagSet {
	fs := flag.NewFlagSet("mcpkit "+cmd.Name(), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseArgs is the one argument parser of the mcpkit commands: flags may
// come anywhere before "--", between the positional arguments; everything
// after the first "--" is a command to run, taken as is. It returns the
// positional arguments, the arguments after "--", whether there was one,
// and flag.ErrHelp for -h, -help or --help.
func parseArgs(fs *flag.FlagSet, args []string) (positional, command []string, dash bool, err error) {
	if i := slices.Index(args, "--"); i >= 0 {
		args, command, dash = args[:i], args[i+1:], true
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, false, err
		}
		if fs.NArg() == 0 {
			return positional, command, dash, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// aliasUsage starts the usage of a flag kept as an alias of another: help
// leaves it out.
const aliasUsage = "(alias) "

// writeUsage writes the help of cmd, whose flags fs holds: usage lines,
// description, flags and exit codes.
func writeUsage(w io.Writer, cmd *Command, fs *flag.FlagSet) {
	writeUsageLines(w, cmd)
	if cmd.Long != "" {
		fmt.Fprintf(w, "\n%s", cmd.Long)
	}
	if flags := flagHelp(fs); flags != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", flags)
	}
	fmt.Fprintf(w, "\n%s", exitTable(cmd.Exits, cmd.Failed))
}

// flagHelp lists the flags of fs, aliases left out, as flag.PrintDefaults
// does but with the double dash the documentation uses.
func flagHelp(fs *flag.FlagSet) string {
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Usage, aliasUsage) {
			return
		}
		name, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, "  --%s", f.Name)
		if name != "" {
			fmt.Fprintf(&b, " %s", name)
		}
		b.WriteString("\n    \t")
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "0s" && !strings.Contains(usage, "(default") {
			if isStringFlag(f) {
				fmt.Fprintf(&b, " (default %q)", d)
			} else {
				fmt.Fprintf(&b, " (default %s)", d)
			}
		}
		b.WriteString("\n")
	})
	return b.String()
}

// isStringFlag reports whether f holds a string, whose default help quotes.
func isStringFlag(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	_, ok = g.Get().(string)
	return ok
}
