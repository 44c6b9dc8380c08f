package cli

import (
	"context"
	"fmt"
	"io"
)

var readCommand = clientCommand{
	name:     "read",
	synopsis: "URI",
	about: `Reads a resource and prints its contents: text as text, binary contents as
indented JSON (--json: the result object as the server sent it).
`,
	min: 1, max: 1,
}

// read runs `mcpkit read`.
func read(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, t, pos, code, ok := parseClientArgs(readCommand, args, stdout, stderr)
	if !ok {
		return code
	}
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
