// Command docmodule writes the module that internal/doccheck's TestGoBlocks compiles (every
// whole-file Go block of README.md and docs/*.md, requiring mcpkit and its nested modules by
// replace lines) into a directory, so that scripts/test.sh's setup step can fetch its
// dependencies (`go list -m all`) with the configured proxy before the doc check runs offline.
//
// Usage: go run ./internal/doccheck/docmodule DIR
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcpkit/mcpkit/internal/doccheck"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: docmodule DIR (run from the repository)")
		os.Exit(2)
	}
	root, err := filepath.Abs(".")
	if err == nil {
		err = os.MkdirAll(os.Args[1], 0o755)
	}
	var n int
	if err == nil {
		n, err = doccheck.WriteDocModule(os.Args[1], root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docmodule:", err)
		os.Exit(1)
	}
	fmt.Printf("%d Go blocks written to %s\n", n, os.Args[1])
}
