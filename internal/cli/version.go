package cli

import (
	"flag"
	"fmt"
	"runtime/debug"
	"strings"
)

// readBuildInfo is debug.ReadBuildInfo, replaced in tests.
var readBuildInfo = debug.ReadBuildInfo

// versionCommand is `mcpkit version`: the module version, the commit and
// the Go version the binary was built with, from its build information.
var versionCommand = &Command{
	UsageLine: "version",
	Short:     "the mcpkit version, commit and Go version of this binary (also mcpkit --version)",
	Flag: func(fs *flag.FlagSet) Runner {
		return func(inv *invocation) int {
			if len(inv.args) > 0 || inv.dash {
				return inv.usageError("takes no arguments (got %q)", append(inv.args, inv.command...))
			}
			fmt.Fprint(inv.stdout, versionText())
			return exitOK
		}
	},
	Exits: []int{exitOK, exitUsage},
}

// versionText describes the running binary, one "name value" line each.
func versionText() string {
	bi, ok := readBuildInfo()
	if !ok {
		return "mcpkit (no build information: not built with module support)\n"
	}
	mod := bi.Main.Version
	switch mod {
	case "", "(devel)":
		mod = "(devel): built from a checkout, not from a released module version"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	commit := settings["vcs.revision"]
	switch {
	case commit == "":
		commit = "unknown (built without VCS information, e.g. -buildvcs=false or outside a git checkout)"
	case settings["vcs.modified"] == "true":
		commit += " (with uncommitted changes)"
	}
	if t := settings["vcs.time"]; t != "" && !strings.HasPrefix(commit, "unknown") {
		commit += ", " + t
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mcpkit   %s\n", mod)
	fmt.Fprintf(&b, "module   %s\n", bi.Main.Path)
	fmt.Fprintf(&b, "commit   %s\n", commit)
	fmt.Fprintf(&b, "go       %s\n", bi.GoVersion)
	fmt.Fprintf(&b, "protocol 2026-07-28 (and the legacy revisions 2025-11-25 to 2024-11-05)\n")
	return b.String()
}
