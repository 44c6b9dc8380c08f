package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// listCommands are `mcpkit tools`, `mcpkit resources` and `mcpkit
// prompts`, and the lists each prints.
var listCommands = map[string]struct {
	cmd   clientCommand
	kinds []string
}{
	"tools": {clientCommand{name: "tools", about: `Lists the server's tools (every page), one a line: name and description
(--json: {"tools": [...]} with every tool as the server sent it).
`}, []string{"tools"}},
	"resources": {clientCommand{name: "resources", about: `Lists the server's resources and then its resource templates (every page), one
a line: URI, name, MIME type and description (--json: {"resources": [...],
"resourceTemplates": [...]}).
`}, []string{"resources", "resourceTemplates"}},
	"prompts": {clientCommand{name: "prompts", about: `Lists the server's prompts (every page), one a line: name, arguments
([optional] ones bracketed) and description (--json: {"prompts": [...]}).
`}, []string{"prompts"}},
}

// listCmd runs `mcpkit tools|resources|prompts`.
func listCmd(name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	lc := listCommands[name]
	f, t, _, code, ok := parseClientArgs(lc.cmd, args, stdout, stderr)
	if !ok {
		return code
	}
	ctx := context.Background()
	c, code := connectClient(ctx, name, f, t, clientIO{stdin, stderr})
	if c == nil {
		return code
	}
	defer c.Close()
	all := map[string][]json.RawMessage{}
	for _, kind := range lc.kinds {
		items, err := listItems(ctx, c.Client, kind)
		if err != nil {
			return requestFailed(name, err, stderr)
		}
		if items == nil {
			items = []json.RawMessage{}
		}
		all[kind] = items
	}
	if f.json {
		b, _ := json.Marshal(all)
		printRaw(stdout, b)
		return exitOK
	}
	for i, kind := range lc.kinds {
		if i > 0 && len(all[kind]) > 0 {
			fmt.Fprintf(stdout, "\nresource templates:\n")
		}
		printList(stdout, kind, all[kind])
	}
	if total := len(all[lc.kinds[0]]); total == 0 && len(lc.kinds) == 1 {
		fmt.Fprintf(stderr, "(no %s)\n", name)
	}
	return exitOK
}
