package cli

import (
	"context"
	"fmt"
)

var readCommand = clientCommand{
	name:     "read",
	synopsis: "URI",
	short:    "read a resource and print its contents",
	about: `Reads a resource and prints its contents: text as text, binary contents as
indented JSON (--json: the result object as the server sent it).
`,
	min: 1, max: 1,
	run: read,
}

// read runs `mcpkit read`.
func read(inv *invocation, f *clientFlags, t target, pos []string) int {
	stdin, stdout, stderr := inv.stdin, inv.stdout, inv.stderr
	ctx := context.Background()
	c, code := connectClient(ctx, "read", f, t, clientIO{stdin, stderr})
	if c == nil {
		return code
	}
	defer c.Close()
	res, err := c.Call(ctx, "resources/read", map[string]any{"uri": pos[0]})
	if err != nil {
		return requestFailed("read", err, stderr)
	}
	if f.json {
		printRaw(stdout, res)
		return exitOK
	}
	if err := printReadResult(stdout, res); err != nil {
		fmt.Fprintf(stderr, "mcpkit read: %v\n", err)
		return exitRequestFails
	}
	return exitOK
}
