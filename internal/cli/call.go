package cli

import (
	"context"
	"fmt"
)

var callCommand = clientCommand{
	name:     "call",
	synopsis: "TOOL [JSON]",
	short:    "call a tool and print its result",
	exits:    exitsCall,
	failed:   "the tool reported an error (isError: true); its content is printed",
	about: `Calls a tool and prints its result: text content as text, any other content as
indented JSON (--json: the result object as the server sent it). JSON is the
tool's arguments, an object: '{"text":"hi"}'. On a terminal, a request for
input (elicitation) is asked for field by field; elsewhere the client offers
no elicitation.
`,
	min: 1, max: 2,
	run: call,
}

// call runs `mcpkit call`.
func call(inv *invocation, f *clientFlags, t target, pos []string) int {
	stdin, stdout, stderr := inv.stdin, inv.stdout, inv.stderr
	var argJSON string
	if len(pos) > 1 {
		argJSON = pos[1]
	}
	arguments, err := jsonObjectArg("the tool's arguments", argJSON)
	if err != nil {
		fmt.Fprintf(stderr, "mcpkit call: %v\n", err)
		return exitUsage
	}
	ctx := context.Background()
	c, code := connectClient(ctx, "call", f, t, clientIO{stdin, stderr})
	if c == nil {
		return code
	}
	defer c.Close()
	res, err := callTool(ctx, c.Client, pos[0], arguments)
	if err != nil {
		return requestFailed("call", err, stderr)
	}
	if f.json {
		printRaw(stdout, res)
		if isToolError(res) {
			return exitToolError
		}
		return exitOK
	}
	isErr, err := printCallResult(stdout, res)
	if err != nil {
		fmt.Fprintf(stderr, "mcpkit call: %v\n", err)
		return exitRequestFails
	}
	if isErr {
		fmt.Fprintf(stderr, "mcpkit call: tool %q reported an error (isError: true)\n", pos[0])
		return exitToolError
	}
	return exitOK
}
