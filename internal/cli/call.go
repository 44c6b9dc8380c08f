package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"sync"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
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
no elicitation, unless --elicit gives the answers: each is a JSON object (the
form's content, accepted), decline or cancel, used in order, one per request:
  mcpkit call URL book '{"room":"A"}' --elicit '{"confirm":true}' --elicit decline
`,
	min: 1, max: 2,
	flags: callCommandFlags,
}

// callCommandFlags registers call's own flag, --elicit, and returns call with the
// answers it collected.
func callCommandFlags(fs *flag.FlagSet) clientRunner {
	answers := &elicitAnswers{}
	fs.Var(answers, "elicit", "answer the next form elicitation with `ANSWER`: a JSON object (accept), decline or cancel (repeatable, used in order)")
	return func(inv *invocation, f *clientFlags, t target, pos []string) int {
		if len(answers.list) > 0 {
			f.elicit = answers.handler()
		}
		return call(inv, f, t, pos)
	}
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

// elicitAnswers are the --elicit flags of `mcpkit call`, in order.
type elicitAnswers struct {
	list []*mcp.ElicitResult

	mu   sync.Mutex
	next int
}

func (a *elicitAnswers) String() string { return "" }

// Set parses one answer: decline, cancel, or a JSON object (accepted content).
func (a *elicitAnswers) Set(s string) error {
	switch s {
	case "decline":
		a.list = append(a.list, &mcp.ElicitResult{Action: mcp.ElicitDecline})
		return nil
	case "cancel":
		a.list = append(a.list, &mcp.ElicitResult{Action: mcp.ElicitCancel})
		return nil
	}
	var content map[string]any
	if err := json.Unmarshal([]byte(s), &content); err != nil || content == nil {
		return errors.New("want a JSON object (the form's content), decline or cancel")
	}
	a.list = append(a.list, &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: content})
	return nil
}

// handler answers form elicitations with the answers in order; a request
// past the last answer, or in URL mode, is an error naming it.
func (a *elicitAnswers) handler() client.ElicitHandler {
	return func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		if p.Mode == mcp.ElicitModeURL {
			return nil, errors.New("mcpkit call: --elicit answers forms only, not a URL elicitation")
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.next >= len(a.list) {
			return nil, fmt.Errorf("mcpkit call: the server asked for input %d (%q), but --elicit gave %d answer(s)", a.next+1, p.Message, len(a.list))
		}
		r := a.list[a.next]
		a.next++
		return r, nil
	}
}
