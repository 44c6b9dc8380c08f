package cli

import (
	"context"
	"encoding/json"
	"fmt"
)

// listCommand is `mcpkit tools`, `mcpkit resources` or `mcpkit prompts`:
// it prints the lists kinds.
func listCommand(name, short, about string, kinds ...string) clientCommand {
	return clientCommand{name: name, short: short, about: about,
		run: func(inv *invocation, f *clientFlags, t target, _ []string) int {
			return listCmd(name, kinds, inv, f, t)
		}}
}

var (
	toolsCommand = listCommand("tools", "list the server's tools", `Lists the server's tools (every page), one a line: name and description
(--json: {"tools": [...]} with every tool as the server sent it).
`, "tools")
	resourcesCommand = listCommand("resources", "list the server's resources and resource templates", `Lists the server's resources and then its resource templates (every page), one
a line: URI, name, MIME type and description (--json: {"resources": [...],
"resourceTemplates": [...]}).
`, "resources", "resourceTemplates")
	promptsCommand = listCommand("prompts", "list the server's prompts", `Lists the server's prompts (every page), one a line: name, arguments
([optional] ones bracketed) and description (--json: {"prompts": [...]}).
`, "prompts")
)

// listCmd runs `mcpkit tools|resources|prompts`.
func listCmd(name string, kinds []string, inv *invocation, f *clientFlags, t target) int {
	stdin, stdout, stderr := inv.stdin, inv.stdout, inv.stderr
	ctx := context.Background()
	c, code := connectClient(ctx, name, f, t, clientIO{stdin, stderr})
	if c == nil {
		return code
	}
	defer c.Close()
	all := map[string][]json.RawMessage{}
	for _, kind := range kinds {
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
	for i, kind := range kinds {
		if i > 0 && len(all[kind]) > 0 {
			fmt.Fprintf(stdout, "\nresource templates:\n")
		}
		printList(stdout, kind, all[kind])
	}
	if total := len(all[kinds[0]]); total == 0 && len(kinds) == 1 {
		fmt.Fprintf(stderr, "(no %s)\n", name)
	}
	return exitOK
}
