package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/internal/appsfixture"
	"github.com/mcpkit/mcpkit/internal/demo"
)

type appsJSON struct {
	OK       bool     `json:"ok"`
	Views    []string `json:"views"`
	Tools    []string `json:"tools"`
	Findings []struct {
		Rule, Level, Summary, Section, Object, Detail string
	} `json:"findings"`
	NotChecked []string `json:"notChecked"`
}

// TestAppsCheckBroken: the broken fixture fails rule by rule, each
// finding complete, and the exit code says a MUST rule is broken.
func TestAppsCheckBroken(t *testing.T) {
	ts := httptest.NewServer(appsfixture.Broken())
	defer ts.Close()
	code, out, errOut := runCLI(t, "apps", "check", "--json", "--call", "empty={}", ts.URL)
	if code != exitCheckFailed {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitCheckFailed, errOut)
	}
	var r appsJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var ids []string
	for _, f := range r.Findings {
		if f.Rule == "" || f.Level == "" || f.Summary == "" || f.Section == "" || f.Object == "" || f.Detail == "" {
			t.Errorf("incomplete finding %+v", f)
		}
		if !slices.Contains(ids, f.Rule) {
			ids = append(ids, f.Rule)
		}
	}
	slices.Sort(ids)
	if d := cmp.Diff(appsfixture.BrokenRules, ids); d != "" {
		t.Errorf("rules (-want +got):\n%s", d)
	}
	if r.OK {
		t.Error("ok = true")
	}
	// The readable form names the rule, the object and the section.
	code, out, _ = runCLI(t, "apps", "check", ts.URL)
	for _, want := range []string{"MUST   view-exists  tool \"missing\"", "spec: Resource Discovery", "not checked (", "FAIL: a MUST rule is broken"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code != exitCheckFailed {
		t.Errorf("exit %d", code)
	}
}

// TestAppsCheckDemo: the demo's App passes, over HTTP and stdio, with its
// tool called.
func TestAppsCheckDemo(t *testing.T) {
	ts := httptest.NewServer(demo.NewPlain(nil))
	defer ts.Close()
	for _, target := range [][]string{{ts.URL}, mcpkitServeCommand(t)} {
		args := append([]string{"apps", "check", "--json", "--call", `shout_app={"text":"hi"}`}, target...)
		code, out, errOut := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s %s", target, code, out, errOut)
		}
		var r appsJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if !r.OK || len(r.Findings) != 0 || len(r.NotChecked) != 0 || !slices.Equal(r.Tools, []string{"shout_app"}) || len(r.Views) != 1 {
			t.Errorf("%v: %+v", target, r)
		}
	}
}

func TestAppsCheckUsage(t *testing.T) {
	ts := httptest.NewServer(demo.NewPlain(nil))
	defer ts.Close()
	cases := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"apps"}, exitUsage, "want a subcommand"},
		{[]string{"apps", "lint", ts.URL}, exitUsage, "want a subcommand"},
		{[]string{"apps", "check"}, exitUsage, "give a URL"},
		{[]string{"apps", "check", "--call", "x", ts.URL}, exitUsage, "NAME=JSON"},
		{[]string{"apps", "check", "--call", "shout_app=[1]", ts.URL}, exitUsage, "JSON object"},
		{[]string{"apps", "check", "--call", "echo={}", ts.URL}, exitUsage, "no tool of that name links a view"},
		{[]string{"apps", "check", "http://127.0.0.1:1/mcp"}, exitUnreachable, ""},
	}
	for _, tc := range cases {
		code, _, errOut := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.err) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.err)
		}
	}
}

// TestDiscoverShowsApps: discover tells whether the extension is
// advertised and, with --list, which tools have views; a server without
// MCP Apps gets no apps line.
func TestDiscoverShowsApps(t *testing.T) {
	ts := httptest.NewServer(demo.NewPlain(nil))
	defer ts.Close()
	code, out, errOut := runCLI(t, "discover", "--json", "--list", ts.URL)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Apps == nil || !r.Apps.Advertised || !slices.Equal(r.Apps.MIMETypes, []string{"text/html;profile=mcp-app"}) ||
		len(r.Apps.Views) != 1 || r.Apps.Views[0].Tool != "shout_app" || !strings.HasPrefix(r.Apps.Views[0].View, "ui://mcpkit-demo/shout-") {
		t.Errorf("apps = %+v", r.Apps)
	}
	_, out, _ = runCLI(t, "discover", "--list", ts.URL)
	for _, want := range []string{"  apps          io.modelcontextprotocol/ui advertised (text/html;profile=mcp-app); 1 tool(s) with a view\n", "\nviews (1)\n  shout_app  ui://mcpkit-demo/shout-"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	plain := httptest.NewServer(appsfixture.Plain())
	defer plain.Close()
	_, out, _ = runCLI(t, "discover", "--list", plain.URL)
	if strings.Contains(out, "apps ") || strings.Contains(out, "views (") {
		t.Errorf("a server without MCP Apps shows an apps line:\n%s", out)
	}
}

// TestAppsOutputHostile checks that what a hostile server names (tools,
// views, MIME types, finding objects) reaches the terminal escaped and
// bounded, in `apps check` and in discover's apps lines.
func TestAppsOutputHostile(t *testing.T) {
	const esc = "evil\x1b[2J\u202e"
	many := make([]string, 50)
	for i := range many {
		many[i] = fmt.Sprintf("tool%d", i)
	}
	var out bytes.Buffer
	printAppsReport(&out, "target", &apps.Report{
		Views:      []string{"ui://" + esc},
		Tools:      append([]string{esc}, many...),
		Findings:   []apps.Finding{{Rule: apps.RuleScheme, Object: esc, Detail: esc}},
		NotChecked: []string{esc},
	})
	p := &printer{w: &out}
	a := &appsInfo{Advertised: true, MIMETypes: []string{esc}, Views: []viewLink{{Tool: esc, View: esc, Visibility: []string{esc}}}}
	p.apps(a, true)
	p.views(a)
	s := out.String()
	if strings.ContainsAny(s, "\x1b\u202e") {
		t.Errorf("raw escape or bidi control printed:\n%q", s)
	}
	if strings.Contains(s, "tool49") {
		t.Errorf("a list of 51 tools printed whole, want the first few and a count:\n%s", s)
	}
}
