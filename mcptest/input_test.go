package mcptest_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/demo"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// TestAutomaticInput runs the demo's tools that ask the client for input,
// in both eras: at 2026-07-28 as input_required rounds, in a legacy
// session as elicitation/create, sampling/createMessage and roots/list
// requests; the options answer them the same way.
func TestAutomaticInput(t *testing.T) {
	opts := []mcptest.Option{
		mcptest.Elicit(map[string]any{"name": "Ada"}),
		mcptest.Sample("Paris."),
		mcptest.Roots(mcp.Root{URI: "file:///work", Name: "work"}),
	}
	tests := []struct {
		tool, want string
	}{
		{"test_input_required_result_elicitation", "Hello, Ada!"},
		{"test_input_required_result_sampling", "The model answered: Paris."},
		{"test_input_required_result_list_roots", "The client has 1 root(s): file:///work"},
	}
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			o := opts
			if era == "legacy" {
				o = append([]mcptest.Option{mcptest.Legacy()}, opts...)
			}
			c := mcptest.NewClient(t, demo.New(nil), o...)
			for _, tt := range tests {
				res, err := c.CallTool(tt.tool, nil)
				if err != nil || res.IsError || res.Text() != tt.want {
					t.Errorf("%s = %+v, %v; want %q", tt.tool, res, err, tt.want)
				}
			}
			el := c.Elicitations()
			if len(el) != 1 || el[0].Message != "What is your name?" {
				t.Errorf("Elicitations = %+v, want the one name question", el)
			}
			if s := c.SamplingRequests(); len(s) != 1 {
				t.Errorf("SamplingRequests = %+v, want one", s)
			}
		})
	}
}

// TestNoCapabilities checks that without the options the client declares
// nothing, so that a tool that needs sampling fails with -32021.
func TestDeclineAndNoCapability(t *testing.T) {
	c := mcptest.NewClient(t, demo.New(nil), mcptest.ElicitWith(func(p *mcp.ElicitParams) *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: mcp.ElicitDecline}
	}))
	res, err := c.CallTool("test_input_required_result_elicitation", nil)
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "decline") {
		t.Errorf("declined elicitation = %+v, %v; want a tool error naming decline", res, err)
	}
	_, err = c.CallTool("test_missing_capability", nil)
	if err == nil {
		t.Errorf("test_missing_capability without sampling: no error")
	}
}

// TestResourceAndPromptHelpers reads a resource and renders a prompt in
// both eras.
func TestResourceAndPromptHelpers(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		var o []mcptest.Option
		if legacy {
			o = append(o, mcptest.Legacy())
		}
		c := mcptest.NewClient(t, demo.New(nil), o...)
		text, err := c.ReadText("test://static-text")
		if err != nil || text != "This is the content of the static text resource." {
			t.Errorf("legacy %v: ReadText = %q, %v", legacy, text, err)
		}
		if _, err := c.ReadText("test://static-binary"); err == nil {
			t.Errorf("legacy %v: ReadText of a binary resource: no error", legacy)
		}
		p, err := c.PromptText("test_prompt_with_arguments", map[string]string{"arg1": "a", "arg2": "b"})
		if err != nil || p != "user: Prompt with arguments: arg1='a', arg2='b'" {
			t.Errorf("legacy %v: PromptText = %q, %v", legacy, p, err)
		}
		rs, err := c.ListResources()
		if err != nil || len(rs) < 3 {
			t.Errorf("legacy %v: ListResources = %d, %v", legacy, len(rs), err)
		}
		ps, err := c.ListPrompts()
		if err != nil || len(ps) < 3 {
			t.Errorf("legacy %v: ListPrompts = %d, %v", legacy, len(ps), err)
		}
		d, err := c.Discover()
		if err != nil || d.ServerInfo.Name != demo.Name || d.Capabilities.Tools == nil {
			t.Errorf("legacy %v: Discover = %+v, %v", legacy, d, err)
		}
	}
}

// TestTestKeyIsQuiet checks that a server under test seals its
// requestState with the fixed test key and logs nothing about keys.
func TestTestKeyIsQuiet(t *testing.T) {
	t.Setenv(mcp.StateKeysEnv, "")
	var log strings.Builder
	s := demo.New(&mcp.ServerOptions{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	c := mcptest.NewClient(t, s, mcptest.Elicit(map[string]any{"name": "Ada"}))
	if res, err := c.CallTool("test_input_required_result_elicitation", nil); err != nil || res.Text() != "Hello, Ada!" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if strings.Contains(log.String(), "requestState") {
		t.Errorf("the server logged about its key:\n%s", log.String())
	}
}
