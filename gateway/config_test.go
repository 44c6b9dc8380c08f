package gateway_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

func lookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParse(t *testing.T) {
	const doc = `servers:
  everything:
    command: [npx, -y, "@modelcontextprotocol/server-everything"]
    env: {LOG_LEVEL: info, COST: "$$5 ${USER_NAME}"}
    tools: {allow: [echo, add], deny: [add]}
    required: true
    timeout: 30s
  files:
    url: http://127.0.0.1:9000/mcp
    headers: {Authorization: "Bearer ${FILES_TOKEN}"}
    prefix: false
    scopes: [files:read]
    tool_scopes:
      write: [files:write, audit]
    rate_limit: {rate: 10/s, burst: 20}
    tasks: optional
    task_tools:
      slow: required
      confirm: "optional,input-starts-task"
      quick: none
resources:
  prefer: files
`
	got, err := gateway.Parse("gw.yaml", []byte(doc), lookup(map[string]string{"FILES_TOKEN": "t0k", "USER_NAME": "ann"}))
	if err != nil {
		t.Fatal(err)
	}
	want := &gateway.Config{
		Servers: []gateway.ServerConfig{
			{Name: "everything", Command: []string{"npx", "-y", "@modelcontextprotocol/server-everything"},
				Env: map[string]string{"LOG_LEVEL": "info", "COST": "$5 ann"}, AllowTools: []string{"echo", "add"}, DenyTools: []string{"add"}, Required: true, Timeout: 30 * time.Second, Line: 2},
			{Name: "files", URL: "http://127.0.0.1:9000/mcp", Headers: map[string]string{"Authorization": "Bearer t0k"}, NoPrefix: true, Line: 8,
				Scopes: []string{"files:read"}, ToolScopes: map[string][]string{"write": {"files:write", "audit"}}, ScopesLine: 12,
				RateLimit: &gateway.RateLimit{Count: 10, Per: time.Second, Burst: 20},
				Tasks:     mcp.TaskOptional, TaskTools: map[string]bridge.TaskTool{"slow": {Support: mcp.TaskRequired},
					"confirm": {Support: mcp.TaskOptional, InputStartsTask: true}, "quick": {}}},
		},
		Prefer: "files",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Parse (-want +got):\n%s", d)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"empty", ``, "gw.yaml: the configuration is empty"},
		{"no servers", "servers: {}\n", "gw.yaml:1: no servers"},
		{"unknown top key", "servers: {a: {url: 'http://x/'}}\nextra: 1\n", "gw.yaml:2: the configuration: unknown key \"extra\""},
		{"bad name", "servers:\n  Files:\n    url: http://x/\n", "gw.yaml:2: server name \"Files\""},
		{"underscore name", "servers:\n  my_files:\n    url: http://x/\n", "gw.yaml:2: server name \"my_files\""},
		{"long name", "servers:\n  " + strings.Repeat("a", 33) + ":\n    url: http://x/\n", "gw.yaml:2: server name"},
		{"neither", "servers:\n  a:\n    prefix: true\n", "gw.yaml:2: server a: want command or url"},
		{"both", "servers:\n  a:\n    url: http://x/\n    command: [x]\n", "gw.yaml:2: server a: both command and url"},
		{"bad url", "servers:\n  a:\n    url: file:///etc/passwd\n", "gw.yaml:3: server a: url"},
		{"missing var", "servers:\n  a:\n    url: http://x/\n    headers:\n      Authorization: Bearer ${NOPE}\n", "gw.yaml:5: server a: headers: Authorization: the variable NOPE is not set"},
		{"lone dollar", "servers:\n  a:\n    command: [x]\n    env: {A: $5}\n", "gw.yaml:4: server a: env: A: a $ not followed"},
		{"unterminated", "servers:\n  a:\n    command: [x]\n    env:\n      A: ${X\n", "gw.yaml:5: server a: env: A: an unterminated ${"},
		{"bad var name", "servers:\n  a:\n    command: [x]\n    env: {A: '${1X}'}\n", "gw.yaml:4: server a: env: A: ${1X}: not a variable name"},
		{"env for url", "servers:\n  a:\n    url: http://x/\n    env: {A: b}\n", "gw.yaml:2: server a: env, inherit_env and dir are for a command"},
		{"headers for command", "servers:\n  a:\n    command: [x]\n    headers: {A: b}\n", "gw.yaml:4: server a: headers are for a url"},
		{"prefix not bool", "servers:\n  a:\n    command: [x]\n    prefix: no\n", "gw.yaml:4: server a: prefix: want true or false"},
		{"two unprefixed", "servers:\n  a:\n    command: [x]\n    prefix: false\n  b:\n    command: [y]\n    prefix: false\n", "gw.yaml:5: server \"b\": prefix: false is already set on server \"a\" (line 2)"},
		{"prefer unknown", "servers:\n  a:\n    command: [x]\nresources:\n  prefer: b\n", "gw.yaml:5: resources.prefer: no server is named \"b\""},
		{"command empty", "servers:\n  a:\n    command: []\n", "gw.yaml:3: server a: command: want a list"},
		{"duplicate server", "servers:\n  a:\n    command: [x]\n  a:\n    command: [y]\n", "gw.yaml:4: servers: \"a\" appears twice"},
		{"tools not a list", "servers:\n  a:\n    command: [x]\n    tools: {allow: echo}\n", "gw.yaml:4: server a: tools: allow: want a list of names"},
		{"tools unknown key", "servers:\n  a:\n    command: [x]\n    tools:\n      only: [echo]\n", "gw.yaml:5: server a: tools: unknown key \"only\""},
		{"tools empty name", "servers:\n  a:\n    command: [x]\n    tools:\n      deny:\n        - ''\n", "gw.yaml:6: server a: tools: deny: an empty name"},
		{"bad timeout", "servers:\n  a:\n    command: [x]\n    timeout: soon\n", "gw.yaml:4: server a: timeout \"soon\": want a positive duration"},
		{"negative timeout", "servers:\n  a:\n    command: [x]\n    timeout: -1s\n", "gw.yaml:4: server a: timeout \"-1s\""},
		{"scopes not a list", "servers:\n  a:\n    command: [x]\n    scopes: files:read\n", "gw.yaml:4: server a: scopes: want a list of names"},
		{"scope with a space", "servers:\n  a:\n    command: [x]\n    scopes: [ok, 'files read']\n", "gw.yaml:4: server a: scopes: \"files read\" is not a scope"},
		{"scope with a quote", "servers:\n  a:\n    command: [x]\n    tool_scopes:\n      t: ['a\"b']\n", "gw.yaml:5: server a: tool_scopes: t: \"a\\\"b\" is not a scope"},
		{"tool_scopes not a map", "servers:\n  a:\n    command: [x]\n    tool_scopes: [a]\n", "gw.yaml:4: server a: tool_scopes: want a mapping"},
		{"rate without unit", "servers:\n  a:\n    command: [x]\n    rate_limit: {rate: '10'}\n", "gw.yaml:4: server a: rate_limit: rate \"10\": want COUNT/UNIT"},
		{"rate bad unit", "servers:\n  a:\n    command: [x]\n    rate_limit:\n      rate: 10/d\n", "gw.yaml:5: server a: rate_limit: rate \"10/d\""},
		{"rate zero", "servers:\n  a:\n    command: [x]\n    rate_limit: {rate: 0/s}\n", "gw.yaml:4: server a: rate_limit: rate \"0/s\""},
		{"rate too high", "servers:\n  a:\n    command: [x]\n    rate_limit: {rate: 1000001/s}\n", "gw.yaml:4: server a: rate_limit: rate \"1000001/s\""},
		{"rate leading zero", "servers:\n  a:\n    command: [x]\n    rate_limit: {rate: 010/s}\n", "gw.yaml:4: server a: rate_limit: rate \"010/s\""},
		{"rate missing", "servers:\n  a:\n    command: [x]\n    rate_limit:\n      burst: 5\n", "gw.yaml:5: server a: rate_limit: want rate"},
		{"burst zero", "servers:\n  a:\n    command: [x]\n    rate_limit: {rate: 1/s, burst: 0}\n", "gw.yaml:4: server a: rate_limit: burst 0: want 1 to 1000000"},
		{"burst a string", "servers:\n  a:\n    command: [x]\n    rate_limit: {rate: 1/s, burst: many}\n", "gw.yaml:4: server a: rate_limit: burst: want a whole number"},
		{"rate_limit unknown key", "servers:\n  a:\n    command: [x]\n    rate_limit: {rate: 1/s, per: ip}\n", "gw.yaml:4: server a: rate_limit: unknown key \"per\""},
		{"tasks unknown", "servers:\n  a:\n    command: [x]\n    tasks: always\n", "gw.yaml:4: server a: tasks: \"always\": want none, optional or required"},
		{"tasks not a string", "servers:\n  a:\n    command: [x]\n    tasks: true\n", "gw.yaml:4: server a: tasks: want a string"},
		{"task_tools not a map", "servers:\n  a:\n    command: [x]\n    task_tools: [slow]\n", "gw.yaml:4: server a: task_tools: want a mapping"},
		{"task_tools bad mode", "servers:\n  a:\n    command: [x]\n    task_tools:\n      slow: sometimes\n", "gw.yaml:5: server a: task_tools: slow: \"sometimes\": want none, optional or required"},
		{"task_tools bad suffix", "servers:\n  a:\n    command: [x]\n    task_tools:\n      slow: optional,soon\n", "gw.yaml:5: server a: task_tools: slow: \"optional,soon\""},
		{"task_tools duplicate", "servers:\n  a:\n    command: [x]\n    task_tools:\n      slow: optional\n      slow: required\n", "gw.yaml:6: server a: task_tools: \"slow\" appears twice"},
		{"env in command not expanded", "servers:\n  a:\n    command: [x]\n    inherit_env: 1\n", "gw.yaml:4: server a: inherit_env: want true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gateway.Parse("gw.yaml", []byte(tc.doc), lookup(nil))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("Parse: err = %v, want prefix %q", err, tc.want)
			}
		})
	}
}

// TestCommandOnlyItsArgsExpand checks that ${NAME} expands in env and
// headers values only: in a command it is passed as written.
func TestCommandOnlyItsArgsExpand(t *testing.T) {
	cfg, err := gateway.Parse("gw.yaml", []byte("servers:\n  a:\n    command: [echo, '${HOME}']\n"), lookup(map[string]string{"HOME": "/h"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers[0].Command[1]; got != "${HOME}" {
		t.Errorf("command argument = %q, want it unexpanded", got)
	}
}

func TestTransportEnv(t *testing.T) {
	t.Setenv("PATH", "/p")
	t.Setenv("MCPKIT_TEST_GW_SECRET", "x")
	s := gateway.ServerConfig{Name: "a", Command: []string{"srv", "-v"}, Env: map[string]string{"OWN": "1"}}
	tr := s.Transport(nil).(*client.CommandTransport)
	if !tr.ReplaceEnv || !contains(tr.Env, "PATH=/p") || !contains(tr.Env, "OWN=1") || len(tr.Env) > 5 {
		t.Errorf("Transport: ReplaceEnv=%v Env=%q, want only PATH, HOME, LANG, TMPDIR and OWN", tr.ReplaceEnv, tr.Env)
	}
	s.InheritEnv = true
	tr = s.Transport(nil).(*client.CommandTransport)
	if tr.ReplaceEnv || !cmp.Equal(tr.Env, []string{"OWN=1"}) {
		t.Errorf("inherit_env: ReplaceEnv=%v Env=%q, want the whole environment plus OWN", tr.ReplaceEnv, tr.Env)
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestExpand(t *testing.T) {
	env := lookup(map[string]string{"A": "1", "B_2": "two", "E": ""})
	for _, tc := range []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${A}", "1", ""},
		{"x${A}y${B_2}z", "x1ytwoz", ""},
		{"$$", "$", ""},
		{"$${A}", "${A}", ""},
		{"$$$${A}", "$${A}", ""},
		{"$$${A}", "$1", ""},
		{"${E}", "", ""},
		{"$", "", "a $ not followed"},
		{"$A", "", "a $ not followed"},
		{"${", "", "an unterminated ${"},
		{"${}", "", "not a variable name"},
		{"${A-b}", "", "not a variable name"},
		{"${MISSING}", "", "the variable MISSING is not set"},
	} {
		got, err := gateway.Expand(tc.in, env)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Expand(%q): err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParse checks that no input makes Parse panic, that every error names
// the file, and that what parses names valid servers with one transport.
func FuzzParse(f *testing.F) {
	f.Add([]byte("servers:\n  a:\n    command: [x]\n    env: {A: '${V}$$'}\n"))
	f.Add([]byte("servers:\n  b:\n    url: http://h/mcp\n    headers: {H: '${V}'}\n    prefix: false\nresources: {prefer: b}\n"))
	f.Add([]byte("servers: [1, 2]\n"))
	f.Add([]byte("servers:\n  a:\n    command: [x]\n    scopes: [s:r]\n    tool_scopes: {t: [s:w]}\n    rate_limit: {rate: 10/s, burst: 20}\n"))
	f.Add([]byte("servers:\n  a: &x {command: [x]}\n  b: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := gateway.Parse("f.yaml", data, lookup(map[string]string{"V": "v"}))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, s := range cfg.Servers {
			if (len(s.Command) > 0) == (s.URL != "") {
				t.Fatalf("server %q: command %q and url %q", s.Name, s.Command, s.URL)
			}
		}
	})
}

// FuzzExpand checks Expand against its definition: without an error, the
// output with every ${V} put back is the input with $$ made $.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"", "$$", "${V}", "a${V}b$$c", "${", "$x", "${V"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := gateway.Expand(s, lookup(map[string]string{"V": "\x00"}))
		if err != nil {
			return
		}
		want := strings.ReplaceAll(strings.ReplaceAll(s, "${V}", "\x00"), "$$", "$")
		if !strings.Contains(s, "$$") && got != want {
			t.Fatalf("Expand(%q) = %q, want %q", s, got, want)
		}
		if strings.Count(got, "$") > strings.Count(s, "$") {
			t.Fatalf("Expand(%q) = %q: more dollars out than in", s, got)
		}
	})
}
