package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/client"
)

// clientFlags are the flags every client command takes; the connection
// flags are discover's.
type clientFlags struct {
	json    bool
	timeout time.Duration
	version string
	headers headerFlags
	login   loginFlags
	// elicit answers form elicitation instead of the terminal (call --elicit).
	elicit client.ElicitHandler
	// extensions are declared in the client capabilities (apps check).
	extensions map[string]json.RawMessage
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

// clientCommand describes one client command: clientCmd makes its
// Command.
type clientCommand struct {
	name     string // "call"
	synopsis string // "TOOL [JSON]"
	short    string // the line in the list of commands
	about    string // a paragraph under the usage lines
	min, max int    // the positional arguments after the URL
	exits    []int  // default exitsClient
	failed   string // what exit 1 means (call)
	// run runs the command once its arguments are checked; flags, when
	// set instead, registers the command's own flags and returns its run.
	run   clientRunner
	flags func(fs *flag.FlagSet) clientRunner
}

// clientRunner runs a client command with its flags f, its target t and
// the positional arguments after the URL.
type clientRunner func(inv *invocation, f *clientFlags, t target, pos []string) int

// clientCmd is the Command of cc: "[flags] [URL] ARGS... [-- COMMAND...]",
// with the flags every client command takes. With a command after "--"
// the URL is left out.
func clientCmd(cc clientCommand) *Command {
	exits := cc.exits
	if exits == nil {
		exits = exitsClient
	}
	return &Command{
		UsageLine: strings.TrimSpace(fmt.Sprintf("%s [flags] URL %s", cc.name, cc.synopsis)) + "\n" +
			strings.TrimSpace(fmt.Sprintf("%s [flags] %s", cc.name, cc.synopsis)) + " -- COMMAND ARGS...",
		Short:  cc.short,
		Long:   cc.about,
		Exits:  exits,
		Failed: cc.failed,
		Flag: func(fs *flag.FlagSet) Runner {
			f := registerClientFlags(fs)
			run := cc.run
			if cc.flags != nil {
				run = cc.flags(fs)
			}
			return func(inv *invocation) int {
				t, pos, code, ok := f.resolve(inv, cc)
				if !ok {
					return code
				}
				return run(inv, f, t, pos)
			}
		},
	}
}

// registerClientFlags registers the flags every client command takes.
func registerClientFlags(fs *flag.FlagSet) *clientFlags {
	f := &clientFlags{}
	fs.BoolVar(&f.json, "json", false, "print the result as the server sent it (JSON), not in readable form")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "time allowed for each request")
	protocolVersionFlag(fs, &f.version, "")
	fs.Var(&f.headers, "header", "HTTP header `NAME:VALUE` to send with every request (repeatable)")
	f.login.register(fs)
	return f
}

// protocolVersionFlag registers --protocol-version, and --version as its
// alias (its name until 0.x; kept for scripts that use it), into v.
func protocolVersionFlag(fs *flag.FlagSet, v *string, def string) {
	if def == "" {
		def = "the newest"
	}
	fs.StringVar(v, "protocol-version", "", "preferred protocol `VERSION` (default "+def+"); a legacy version acts as a legacy client")
	fs.Func("version", aliasUsage+"--protocol-version", func(s string) error { *v = s; return nil })
}

// resolve checks the arguments of the client command cc: the target (a
// URL, or a command after "--") and the count of the other positional
// arguments, which it returns. It returns an exit code when the command
// must stop.
func (f *clientFlags) resolve(inv *invocation, cc clientCommand) (target, []string, int, bool) {
	usageErr := func(format string, a ...any) (target, []string, int, bool) {
		return target{}, nil, inv.usageError(format, a...), false
	}
	var t target
	positional := inv.args
	if inv.dash && len(inv.command) == 0 {
		return usageErr("-- needs a command after it")
	}
	if len(inv.command) > 0 {
		t.command = inv.command
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
	return t, positional, exitOK, true
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
