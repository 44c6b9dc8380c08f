package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/mcp"
)

// Forms of the elicitation fixtures.
var (
	nameForm    = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Name"}},"required":["name"]}`)
	confirmForm = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean","title":"OK"}},"required":["ok"]}`)
	contextForm = json.RawMessage(`{"type":"object","properties":{"context":{"type":"string","title":"Context"}},"required":["context"]}`)
	colorForm   = json.RawMessage(`{"type":"object","properties":{"color":{"type":"string","title":"Color"}},"required":["color"]}`)
)

// userText is a sampling message from the user.
func userText(text string) mcp.SamplingMessage {
	return mcp.SamplingMessage{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// askName asks for the user's name under key.
func askName(req *mcp.ToolRequest, key, message string) (string, error) {
	r, err := req.Elicit(key, &mcp.ElicitParams{Message: message, RequestedSchema: nameForm})
	if err != nil {
		return "", err
	}
	var v struct {
		Name string `json:"name"`
	}
	if !r.Accepted() {
		return "", fmt.Errorf("no name given (the user chose %s)", r.Action)
	}
	if err := r.Decode(&v); err != nil {
		return "", err
	}
	return v.Name, nil
}

// addInputTools registers the multi round-trip (input_required) fixtures of
// the conformance suite (tools and a prompt) and two tools a person would
// use: clear_notes asks
// for confirmation before deleting, summarize asks the client's model.
func addInputTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "test_input_required_result_elicitation", Description: "Asks for your name by elicitation, then greets you."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			name, err := askName(req, "user_name", "What is your name?")
			if err != nil {
				return "", err
			}
			return "Hello, " + name + "!", nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "test_input_required_result_sampling", Description: "Asks the client's model a question by sampling."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			r, err := req.Sample("capital_question", &mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{userText("What is the capital of France?")},
				MaxTokens: 100,
			})
			if err != nil {
				return "", err
			}
			return "The model answered: " + r.Text(), nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "test_input_required_result_list_roots", Description: "Asks the client for its roots."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			r, err := req.ListRoots("client_roots")
			if err != nil {
				return "", err
			}
			uris := make([]string, len(r.Roots))
			for i, root := range r.Roots {
				uris[i] = root.URI
			}
			return fmt.Sprintf("The client has %d root(s): %s", len(r.Roots), strings.Join(uris, ", ")), nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "test_input_required_result_request_state", Description: "Keeps its own state across rounds in requestState while asking for a confirmation."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			type state struct {
				Step string `json:"step"`
			}
			var st state
			found, err := req.LoadState(&st)
			if err != nil {
				return "", err
			}
			if !found {
				if err := req.SaveState(state{Step: "awaiting-confirmation"}); err != nil {
					return "", err
				}
			}
			r, err := req.Elicit("confirm", &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: confirmForm})
			if err != nil {
				return "", err
			}
			if found && st.Step == "awaiting-confirmation" {
				return fmt.Sprintf("state-ok: the state came back intact; confirmation: %s", r.Action), nil
			}
			return fmt.Sprintf("confirmation: %s (no state was sent back)", r.Action), nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "test_input_required_result_multiple_inputs", Description: "Asks for a name, a sampled greeting and the roots in one round."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			name, err1 := askName(req, "user_name", "What is your name?")
			greeting, err2 := req.Sample("greeting", &mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{userText("Generate a greeting")},
				MaxTokens: 50,
			})
			roots, err3 := req.ListRoots("client_roots")
			if err := errors.Join(err1, err2, err3); err != nil {
				return "", err
			}
			return fmt.Sprintf("%s, %s! The client has %d root(s).", greeting.Text(), name, len(roots.Roots)), nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "test_input_required_result_multi_round", Description: "Asks two questions, one round after the other."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			name, err := askName(req, "step1", "Step 1: What is your name?")
			if err != nil {
				return "", err
			}
			r, err := req.Elicit("step2", &mcp.ElicitParams{Message: "Step 2: What is your favorite color?", RequestedSchema: colorForm})
			if err != nil {
				return "", err
			}
			var v struct {
				Color string `json:"color"`
			}
			if err := r.Decode(&v); err != nil {
				return "", err
			}
			return fmt.Sprintf("Multi-round complete for %s who likes %s", name, v.Color), nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "test_input_required_result_tampered_state", Description: "Asks for a confirmation; a modified requestState is rejected."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			r, err := req.Elicit("confirm", &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: confirmForm})
			if err != nil {
				return "", err
			}
			return "confirmation: " + string(r.Action), nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "test_input_required_result_capabilities", Description: "Asks only for the kinds of input the client declared: elicitation, else sampling, else roots."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			caps := &req.Info.ClientCapabilities
			switch {
			case caps.CanElicit(mcp.ElicitModeForm):
				name, err := askName(req, "user_name", "What is your name?")
				if err != nil {
					return "", err
				}
				return "Hello, " + name + "!", nil
			case caps.Sampling != nil:
				r, err := req.Sample("name_suggestion", &mcp.CreateMessageParams{
					Messages:  []mcp.SamplingMessage{userText("Suggest a name for a friendly robot.")},
					MaxTokens: 20,
				})
				if err != nil {
					return "", err
				}
				return "Hello, " + r.Text() + "!", nil
			case caps.Roots != nil:
				r, err := req.ListRoots("client_roots")
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("Hello! You have %d root(s).", len(r.Roots)), nil
			}
			return "", mcp.MissingCapability(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}})
		})

	s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "Asks by elicitation what context the prompt should use."},
		func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
			r, err := req.Elicit("user_context", &mcp.ElicitParams{Message: "What context should the prompt use?", RequestedSchema: contextForm})
			if err != nil {
				return nil, err
			}
			var v struct {
				Context string `json:"context"`
			}
			if !r.Accepted() || r.Decode(&v) != nil {
				v.Context = "none given"
			}
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
				{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Answer with this context in mind: " + v.Context}},
			}}, nil
		})

	// Tools a person would use.
	var notes noteBook
	mcp.AddTool(s, &mcp.Tool{Name: "note", Description: "Writes down a note and shows every note so far. The notes live in this server process."},
		func(ctx context.Context, req *mcp.ToolRequest, in NoteIn) (string, error) {
			all := notes.add(in.Text)
			return fmt.Sprintf("Noted. %d note(s):\n- %s", len(all), strings.Join(all, "\n- ")), nil
		})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "clear_notes",
		Description: "Deletes every note, after asking the user to confirm.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)},
	}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		n := notes.count()
		if n == 0 {
			return "There are no notes to delete.", nil
		}
		type confirm struct {
			Confirm bool `json:"confirm" jsonschema:"Yes, delete them all"`
		}
		v, action, err := mcp.ElicitForm[confirm](req, "confirm_delete", fmt.Sprintf("Delete all %d note(s)? This cannot be undone.", n))
		if err != nil {
			return "", err
		}
		if action != mcp.ElicitAccept || !v.Confirm {
			return "Kept the notes: the user did not confirm.", nil
		}
		return fmt.Sprintf("Deleted %d note(s).", notes.clear()), nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "summarize", Description: "Summarizes a text in one sentence, using the client's language model (sampling)."},
		func(ctx context.Context, req *mcp.ToolRequest, in SummarizeIn) (string, error) {
			r, err := req.Sample("summary", &mcp.CreateMessageParams{
				SystemPrompt: "You write one-sentence summaries.",
				Messages:     []mcp.SamplingMessage{userText("Summarize this in one sentence:\n\n" + in.Text)},
				MaxTokens:    200,
			})
			if err != nil {
				return "", err
			}
			return r.Text(), nil
		})
}

// NoteIn is the input of the note tool.
type NoteIn struct {
	Text string `json:"text" jsonschema:"the note to write down"`
}

// SummarizeIn is the input of the summarize tool.
type SummarizeIn struct {
	Text string `json:"text" jsonschema:"the text to summarize"`
}

// noteBook is the in-memory note store of the note tools.
type noteBook struct {
	mu    sync.Mutex
	notes []string
}

func (b *noteBook) add(s string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.notes = append(b.notes, s)
	return append([]string(nil), b.notes...)
}

func (b *noteBook) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.notes)
}

func (b *noteBook) clear() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.notes)
	b.notes = nil
	return n
}
