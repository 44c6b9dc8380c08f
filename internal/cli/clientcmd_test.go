package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/internal/demo"
)

// runCLI runs the mcpkit command line and returns its exit code, stdout
// and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestClientCommands runs the client commands against the demo server
// over HTTP and stdio, in both eras, and checks what they print and how
// they exit.
func TestClientCommands(t *testing.T) {
	ts := httptest.NewServer(demo.New(nil))
	defer ts.Close()
	stdio := mcpkitServeCommand(t)
	tests := []struct {
		name    string
		args    []string // before the target
		code    int
		stdout  string // the whole stdout, unless contains is set
		partial bool   // stdout need only contain the lines
		stderr  string // a part of stderr
	}{
		{"call text", []string{"call", "echo", `{"text":"héllo"}`}, exitOK, "héllo\n", false, ""},
		{"call --json", []string{"call", "--json", "echo", `{"text":"hi"}`}, exitOK, `"content":[{"type":"text","text":"hi"}]`, true, ""},
		{"call mixed content", []string{"call", "test_multiple_content_types"}, exitOK, "Multiple content types test:\n{\n  \"type\": \"image\",", true, ""},
		{"call embedded resource", []string{"call", "test_embedded_resource"}, exitOK, "[resource test://embedded-resource]\n", true, ""},
		{"call tool error", []string{"call", "test_error_handling"}, exitToolError, "This tool intentionally returns an error for testing\n", false, `tool "test_error_handling" reported an error`},
		{"call --json tool error", []string{"call", "--json", "test_error_handling"}, exitToolError, `"isError":true`, true, ""},
		{"call unknown tool", []string{"call", "no_such_tool"}, exitRPCError, "", false, "error -32602: Unknown tool: no_such_tool"},
		{"call arguments not an object", []string{"call", "echo", `["x"]`}, exitUsage, "", false, "the tool's arguments must be a JSON object"},
		{"call arguments not JSON", []string{"call", "echo", `{text:1}`}, exitUsage, "", false, "must be a JSON object"},
		{"call no tool", []string{"call"}, exitUsage, "", false, "missing TOOL"},
		{"call too many", []string{"call", "echo", "{}", "extra"}, exitUsage, "", false, "too many arguments"},
		{"read text", []string{"read", "test://static-text"}, exitOK, "This is the content of the static text resource.\n", false, ""},
		{"read blob", []string{"read", "test://static-binary"}, exitOK, "\"blob\": ", true, ""},
		{"read unknown", []string{"read", "test://nope"}, exitRPCError, "", false, "the server answered with error"},
		{"prompt", []string{"prompt", "test_prompt_with_arguments", `{"arg1":"a","arg2":"b"}`}, exitOK, "user:\nPrompt with arguments: arg1='a', arg2='b'\n", false, ""},
		{"prompt arguments not strings", []string{"prompt", "test_prompt_with_arguments", `{"arg1":1}`}, exitUsage, "", false, "an object of strings"},
		{"tools", []string{"tools"}, exitOK, "echo                                        Echoes the given text back as one text content item.\n", true, ""},
		{"tools --json", []string{"tools", "--json"}, exitOK, `{"tools":[{`, true, ""},
		{"resources", []string{"resources"}, exitOK, "test://static-text                        static-text       text/plain                 A static text resource.\n", true, ""},
		{"resource templates", []string{"resources"}, exitOK, "\nresource templates:\ndemo://times-table/{n}", true, ""},
		{"prompts", []string{"prompts"}, exitOK, "test_prompt_with_arguments          arg1 arg2        A prompt with two required arguments.\n", true, ""},
		{"prompts optional argument", []string{"prompts"}, exitOK, "code_review                         code [language]", true, ""},
		{"bad timeout", []string{"tools", "--timeout", "0"}, exitUsage, "", false, "--timeout must be positive"},
	}
	targets := []struct {
		name string
		args func(cmd []string) []string
	}{
		{"http", func(a []string) []string { return append([]string{a[0], ts.URL}, a[1:]...) }},
		{"http legacy", func(a []string) []string {
			return append([]string{a[0], "--version", "2025-11-25", ts.URL}, a[1:]...)
		}},
		{"stdio", func(a []string) []string { return append(append([]string{}, a...), stdio...) }},
	}
	for _, tg := range targets {
		for _, tt := range tests {
			t.Run(tg.name+"/"+tt.name, func(t *testing.T) {
				code, out, errOut := runCLI(t, tg.args(tt.args)...)
				if code != tt.code {
					t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, errOut)
				}
				if tt.partial {
					if !strings.Contains(out, tt.stdout) {
						t.Errorf("stdout lacks %q:\n%s", tt.stdout, out)
					}
				} else if out != tt.stdout {
					t.Errorf("stdout (-want +got):\n%s", cmp.Diff(tt.stdout, out))
				}
				if !strings.Contains(errOut, tt.stderr) {
					t.Errorf("stderr lacks %q:\n%s", tt.stderr, errOut)
				}
			})
		}
	}
}

// TestClientCommandsUnreachable checks the exit codes of failures to
// connect.
func TestClientCommandsUnreachable(t *testing.T) {
	ts := httptest.NewServer(nil) // answers 404 to everything: not MCP
	defer ts.Close()
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"tools", "http://127.0.0.1:1/mcp"}, exitUnreachable},
		{[]string{"tools", "--", "/no/such/command"}, exitUnreachable},
		{[]string{"call", ts.URL, "echo"}, exitNotMCP},
		{[]string{"tools", "not-a-url"}, exitUsage},
		{[]string{"tools", "--"}, exitUsage},
		{[]string{"tools", "--header", "A:b", "--", "cmd"}, exitUsage},
		{[]string{"tools", ts.URL, "--", "cmd"}, exitUsage},
	}
	for _, tt := range tests {
		code, _, errOut := runCLI(t, tt.args...)
		if code != tt.code {
			t.Errorf("%q: exit %d, want %d; stderr:\n%s", tt.args, code, tt.code, errOut)
		}
	}
}

// TestClientCommandsHelp checks that -h prints the usage with the exit
// codes to stdout and exits 0.
func TestClientCommandsHelp(t *testing.T) {
	for _, cmd := range []string{"call", "read", "prompt", "tools", "resources", "prompts"} {
		code, out, _ := runCLI(t, cmd, "-h")
		if code != exitOK || !strings.Contains(out, "mcpkit "+cmd+" [flags] URL") || !strings.Contains(out, "7  the request failed after connecting") {
			t.Errorf("%s -h: exit %d\n%s", cmd, code, out)
		}
	}
}

func TestPrintList(t *testing.T) {
	items := []json.RawMessage{
		json.RawMessage(`{"name":"a","description":"first\nline"}`),
		json.RawMessage(`{"name":"longer_name"}`),
	}
	var b bytes.Buffer
	printList(&b, "tools", items)
	want := "a            first line\nlonger_name\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCallElicitation calls a tool that asks for input: on a terminal the
// question is asked on stderr and the answer read from stdin; elsewhere
// the client declares no elicitation and the server says it is missing.
func TestCallElicitation(t *testing.T) {
	ts := httptest.NewServer(demo.New(nil))
	defer ts.Close()
	for _, legacy := range []bool{false, true} {
		args := []string{"call", ts.URL, "test_input_required_result_elicitation"}
		if legacy {
			args = []string{"call", "--version", "2025-11-25", ts.URL, "test_elicitation", `{"message":"Who are you?"}`}
		}
		t.Run(fmt.Sprint("legacy=", legacy), func(t *testing.T) {
			interactive = func(io.Reader, io.Writer) bool { return true }
			defer func() { interactive = isTerminal }()
			var stdout, stderr bytes.Buffer
			input := "Ada\n\n" // the name, then Enter to send
			if legacy {
				input = "ada\nada@example.com\n\n"
			}
			code := run(args, strings.NewReader(input), &stdout, &stderr)
			want := "Hello, Ada!\n"
			if legacy {
				want = "ada@example.com"
			}
			if code != exitOK || !strings.Contains(stdout.String(), want) {
				t.Errorf("exit %d, stdout %q, want %q; stderr:\n%s", code, stdout.String(), want, stderr.String())
			}
			if !strings.Contains(stderr.String(), "The server asks: ") || !strings.Contains(stderr.String(), "Send this answer?") {
				t.Errorf("the question was not asked on stderr:\n%s", stderr.String())
			}
		})
	}
	// Not a terminal: no elicitation capability, and the server says so.
	code, out, errOut := runCLI(t, "call", ts.URL, "test_input_required_result_elicitation")
	if code == exitOK || !strings.Contains(out+errOut, "elicitation") {
		t.Errorf("off a terminal: exit %d, stdout %q, stderr %q; want a failure naming elicitation", code, out, errOut)
	}
}

// TestCallElicitFlag answers elicitation off a terminal with --elicit: a JSON object accepts
// with that content, decline and cancel answer with those actions, answers are used in order,
// and without --elicit (and off a terminal) no elicitation capability is declared.
func TestCallElicitFlag(t *testing.T) {
	ts := httptest.NewServer(demo.New(nil))
	defer ts.Close()
	tests := []struct {
		name    string
		args    []string
		want    string
		wantErr string
		code    int
	}{
		{name: "accept", args: []string{"test_input_required_result_elicitation", "--elicit", `{"name":"Ada"}`}, want: "Hello, Ada!"},
		{name: "in order", args: []string{"test_input_required_result_multi_round", "--elicit", `{"name":"Ada"}`, "--elicit", `{"color":"teal"}`}, want: "Multi-round complete for Ada who likes teal"},
		{name: "decline", args: []string{"test_input_required_result_tampered_state", "--elicit", "decline"}, want: "confirmation: decline"},
		{name: "cancel", args: []string{"test_input_required_result_tampered_state", "--elicit", "cancel"}, want: "confirmation: cancel"},
		{name: "too few answers", args: []string{"test_input_required_result_multi_round", "--elicit", `{"name":"Ada"}`}, wantErr: "gave 1 answer", code: exitRequestFails},
		{name: "not JSON", args: []string{"test_input_required_result_elicitation", "--elicit", "yes"}, wantErr: "want a JSON object", code: exitUsage},
		{name: "capability declared", args: []string{"test_input_required_result_capabilities", "--elicit", `{"name":"Ada"}`}, want: "Hello, Ada!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"call", ts.URL}, tt.args...)...)
			if tt.wantErr != "" {
				if code != tt.code || !strings.Contains(errOut, tt.wantErr) {
					t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tt.code, tt.wantErr)
				}
				return
			}
			if code != exitOK || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d, stdout %q, want %q; stderr:\n%s", code, out, tt.want, errOut)
			}
		})
	}
}
