package cli

import (
	"context"
	"encoding/json"
	"fmt"
)

var promptCommand = clientCommand{
	name:     "prompt",
	synopsis: "NAME [JSON]",
	short:    "get a prompt and print its messages",
	about: `Gets a prompt and prints its messages, each under its role: text as text, other
content as indented JSON (--json: the result object as the server sent it).
JSON is the prompt's arguments, an object of strings: '{"name":"Ada"}'.
`,
	min: 1, max: 2,
	run: prompt,
}

// prompt runs `mcpkit prompt`.
func prompt(inv *invocation, f *clientFlags, t target, pos []string) int {
	stdin, stdout, stderr := inv.stdin, inv.stdout, inv.stderr
	var argJSON string
	if len(pos) > 1 {
		argJSON = pos[1]
	}
	arguments, err := jsonObjectArg("the prompt's arguments", argJSON)
	if err == nil && arguments != nil {
		// Prompt arguments are strings (GetPromptRequest.params.arguments).
		var m map[string]string
		if json.Unmarshal(arguments, &m) != nil {
			err = fmt.Errorf("the prompt's arguments must be an object of strings, like '{\"name\":\"Ada\"}'; got %s", quoteShort(argJSON))
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcpkit prompt: %v\n", err)
		return exitUsage
	}
	ctx := context.Background()
	c, code := connectClient(ctx, "prompt", f, t, clientIO{stdin, stderr})
	if c == nil {
		return code
	}
	defer c.Close()
	params := map[string]any{"name": pos[0]}
	if arguments != nil {
		params["arguments"] = arguments
	}
	res, err := c.Call(ctx, "prompts/get", params)
	if err != nil {
		return requestFailed("prompt", err, stderr)
	}
	if f.json {
		printRaw(stdout, res)
		return exitOK
	}
	if err := printPromptResult(stdout, res); err != nil {
		fmt.Fprintf(stderr, "mcpkit prompt: %v\n", err)
		return exitRequestFails
	}
	return exitOK
}
