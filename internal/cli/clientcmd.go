package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/client"
)

// Exit codes of the client commands (call, read, prompt, tools,
// resources, prompts). 2 to 5 mean what they mean for `mcpkit discover`.
const (
	exitToolError = 1 // call: the tool ran and reported an error (isError)
	// exitUsage (2), exitUnreachable (3), exitNotMCP (4) and
	// exitIncompatible (5) are shared with discover.
	exitRPCError     = 6 // the server answered the request with a JSON-RPC error
	exitRequestFails = 7 // the request failed after connecting: timeout, transport, a malformed answer
)

const clientExitCodes = `
Exit codes:
  0  ok
  1  call: the tool reported an error (isError: true); its content is printed
  2  usage error
  3  unreachable: no connection, the command did not start, or no answer at all
  4  not MCP: something answered, but not as an MCP server of either era
  5  incompatible: an MCP server, but no protocol version in common
  6  the server answered with a JSON-RPC error (unknown tool, invalid arguments, ...)
  7  the request failed after connecting (timeout, lost connection, malformed answer)
`

// clientFlags are the flags every client command takes; the connection
// flags are discover's.
type clientFlags struct {
	json    bool
	timeout time.Duration
	version string
	headers headerFlags
	login   loginFlags
	elicit  client.ElicitHandler // answers form elicitation instead of the terminal (call --elicit)
}

// target is where a client command connects: an http(s) URL, or the
// command of a stdio server (after "--").
type target struct {
	url     string
	command []string
}

func (t target) String() string {
	if t.url != "" {
		return t.url
	}
	return strings.Join(t.command, " ")
}

// clientCommand describes one client command for parseClientArgs.
type clientCommand struct {
	name     string // "call"
	synopsis string // "TOOL [JSON]"
	about    string // a paragraph under the usage lines
	min, max int    // the positional arguments after the URL
	// flags, when set, registers the command's own flags.
	flags func(fs *flag.FlagSet)
}

// parseClientArgs parses "[flags] [URL] ARGS... [-- COMMAND...]": flags
// may come anywhere before "--". With a command after "--" the URL is left
// out. It returns the positional arguments other than the URL, or an exit
// code (ok for -h, usage otherwise) when the command must stop.
func parseClientArgs(cc clientCommand, args []string, stdout, stderr io.Writer) (*clientFlags, target, []string, int, bool) {
	fs := flag.NewFlagSet("mcpkit "+cc.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &clientFlags{}
	fs.BoolVar(&f.json, "json", false, "print the result as the server sent it (JSON), not in readable form")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "time allowed for each request")
	fs.StringVar(&f.version, "version", "", "preferred protocol `VERSION` (default the newest); a legacy version acts as a legacy client")
	fs.Var(&f.headers, "header", "HTTP header `NAME:VALUE` to send with every request (repeatable)")
	f.login.register(fs)
	if cc.flags != nil {
		cc.flags(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage:\n  mcpkit %s [flags] URL %s\n  mcpkit %s [flags] %s -- COMMAND ARGS...\n\n%s\nFlags:\n",
			cc.name, cc.synopsis, cc.name, cc.synopsis, cc.about)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), clientExitCodes)
	}
	var command []string
	dash := slices.Index(args, "--")
	if dash >= 0 {
		args, command = args[:dash], args[dash+1:]
	}
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return nil, target{}, nil, exitOK, false
		}
	}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, target{}, nil, exitOK, false
			}
			return nil, target{}, nil, exitUsage, false
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	usageErr := func(format string, a ...any) (*clientFlags, target, []string, int, bool) {
		fmt.Fprintf(stderr, "mcpkit %s: "+format+"\n\n", append([]any{cc.name}, a...)...)
		fs.Usage()
		return nil, target{}, nil, exitUsage, false
	}
	var t target
	if dash >= 0 && len(command) == 0 {
		return usageErr("-- needs a command after it")
	}
	if len(command) > 0 {
		t.command = command
	} else {
		if len(positional) == 0 {
			return usageErr("give a URL, or put -- and a command at the end")
		}
		u, err := url.Parse(positional[0])
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErr("%q is not an http(s) URL (for a stdio server, put -- and its command at the end)", positional[0])
		}
		t.url, positional = positional[0], positional[1:]
	}
	switch {
	case len(positional) < cc.min:
		return usageErr("missing %s", strings.Fields(cc.synopsis)[len(positional)])
	case len(positional) > cc.max:
		return usageErr("too many arguments: %q", positional[cc.max:])
	}
	if f.timeout <= 0 {
		return usageErr("--timeout must be positive")
	}
	if len(f.headers.h) > 0 && t.url == "" {
		return usageErr("--header applies to HTTP only")
	}
	if err := f.login.check(t.url != ""); err != nil {
		return usageErr("%v", err)
	}
	return f, t, positional, exitOK, true
}

// jsonObjectArg checks that arg (the optional JSON of a command line) is
// a JSON object and returns it; "" gives nil.
func jsonObjectArg(what, arg string) (json.RawMessage, error) {
	if arg == "" {
		return nil, nil
	}
	b := []byte(strings.TrimSpace(arg))
	if !json.Valid(b) || len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("%s must be a JSON object, like '{\"text\":\"hi\"}'; got %s", what, quoteShort(arg))
	}
	return b, nil
}

func quoteShort(s string) string {
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return fmt.Sprintf("%q", s)
}
