package apps_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/appsfixture"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

const page = "<!doctype html><html><body><p>hi</p></body></html>"

func withUI(o *client.Options) {
	o.Extensions = map[string]json.RawMessage{apps.ExtensionID: apps.ClientExtension()}
}

// eras runs f once per era, as a client that renders views and one that
// does not.
func eras(t *testing.T, f func(t *testing.T, opts []mcptest.Option, ui bool)) {
	for _, legacy := range []bool{false, true} {
		for _, ui := range []bool{false, true} {
			t.Run(fmt.Sprintf("legacy=%v/ui=%v", legacy, ui), func(t *testing.T) {
				var o []mcptest.Option
				if legacy {
					o = append(o, mcptest.Legacy())
				}
				if ui {
					o = append(o, mcptest.ClientOptions(withUI))
				}
				f(t, o, ui)
			})
		}
	}
}

func TestAddViewServesMetaOnListAndContents(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{})
	border := true
	uri := apps.AddView(s, &apps.View{URI: "ui://t/view.html", Name: "view", FS: fstest.MapFS{"v/index.html": {Data: []byte(page)}}, Path: "v/index.html",
		CSP:         &apps.CSP{ConnectDomains: []string{"https://api.example.com"}, ResourceDomains: []string{"https://*.cdn.example.com"}, FrameDomains: []string{"https://player.example.com:8443"}, BaseURIDomains: []string{"http://127.0.0.1:9"}},
		Permissions: apps.Permissions{Camera: true, ClipboardWrite: true}, Domain: "abc.example.com", PrefersBorder: &border})
	wantUI := map[string]any{
		"csp": map[string]any{
			"connectDomains": []any{"https://api.example.com"}, "resourceDomains": []any{"https://*.cdn.example.com"},
			"frameDomains": []any{"https://player.example.com:8443"}, "baseUriDomains": []any{"http://127.0.0.1:9"},
		},
		"permissions": map[string]any{"camera": map[string]any{}, "clipboardWrite": map[string]any{}},
		"domain":      "abc.example.com", "prefersBorder": true,
	}
	eras(t, func(t *testing.T, o []mcptest.Option, _ bool) {
		c := mcptest.NewClient(t, s, o...)
		list, err := c.ListResources()
		if err != nil || len(list) != 1 {
			t.Fatalf("ListResources = %v, %v", list, err)
		}
		if list[0].URI != uri || list[0].MIMEType != apps.MIMEType {
			t.Errorf("list entry %q %q, want %q %q", list[0].URI, list[0].MIMEType, uri, apps.MIMEType)
		}
		if d := cmp.Diff(wantUI, list[0].Meta["ui"]); d != "" {
			t.Errorf("list entry _meta.ui (-want +got):\n%s", d)
		}
		res, err := c.Client().ReadResource(context.Background(), uri)
		if err != nil {
			t.Fatal(err)
		}
		got := res.Contents[0]
		if got.Text != page || got.MIMEType != apps.MIMEType || got.URI != uri {
			t.Errorf("contents = %+v", got)
		}
		if d := cmp.Diff(wantUI, got.Meta["ui"]); d != "" {
			t.Errorf("contents _meta.ui (-want +got):\n%s", d)
		}
	})
	if fs := apps.Validate(s); len(fs) > 0 {
		t.Errorf("Validate = %v", fs)
	}
}

func TestHashURI(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{})
	a := apps.AddView(s, &apps.View{URI: "ui://demo/counter.html", Name: "a", HTML: page, HashURI: true})
	b := apps.AddView(s, &apps.View{URI: "ui://demo/counter.html", Name: "b", HTML: page + " ", HashURI: true})
	c := apps.AddView(s, &apps.View{URI: "ui://demo/counter", Name: "c", HTML: page, HashURI: true})
	if !strings.HasPrefix(a, "ui://demo/counter-") || !strings.HasSuffix(a, ".html") || len(a) != len("ui://demo/counter-.html")+12 {
		t.Errorf("hash URI = %q", a)
	}
	if a == b {
		t.Errorf("two documents got the same URI %q", a)
	}
	if c != strings.TrimSuffix(a, ".html") {
		t.Errorf("without extension: %q, want %q", c, strings.TrimSuffix(a, ".html"))
	}
	cl := mcptest.NewClient(t, s)
	res, err := cl.Client().ReadResource(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheTTL.Hours() != 24 {
		t.Errorf("ttl of a hashed view = %v, want 24h", res.CacheTTL)
	}
}

func TestLinkToolWritesBothKeys(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{})
	uri := apps.AddView(s, &apps.View{URI: "ui://t/v.html", Name: "v", HTML: page})
	apps.AddTool(s, &mcp.Tool{Name: "show", Description: "d", Meta: mcp.Meta{"keep": "me"}}, apps.ToolUI{View: uri, Visibility: []apps.Visibility{apps.App}},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "shown", nil })
	apps.AddTool(s, &mcp.Tool{Name: "both", Description: "d"}, apps.ToolUI{View: uri},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "shown", nil })
	c := mcptest.NewClient(t, s)
	tools, err := c.ListTools()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]mcp.Meta{
		"both": {"ui": map[string]any{"resourceUri": uri}, "ui/resourceUri": uri},
		"show": {"keep": "me", "ui": map[string]any{"resourceUri": uri, "visibility": []any{"app"}}, "ui/resourceUri": uri},
	}
	got := map[string]mcp.Meta{}
	for _, tl := range tools {
		got[tl.Name] = tl.Meta
		u, vis, ok := apps.ToolView(&tl)
		wantVis := []apps.Visibility{apps.Model, apps.App}
		if tl.Name == "show" {
			wantVis = []apps.Visibility{apps.App}
		}
		if !ok || u != uri || !slices.Equal(vis, wantVis) {
			t.Errorf("ToolView(%s) = %q %v %v", tl.Name, u, vis, ok)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tools' _meta (-want +got):\n%s", d)
	}
}

func TestToolViewFlatKeyOnly(t *testing.T) {
	u, vis, ok := apps.ToolView(&mcp.Tool{Meta: mcp.Meta{"ui/resourceUri": "ui://x/y"}})
	if !ok || u != "ui://x/y" || len(vis) != 2 {
		t.Errorf("ToolView = %q %v %v", u, vis, ok)
	}
	if _, _, ok := apps.ToolView(&mcp.Tool{}); ok {
		t.Error("a tool without _meta has a view")
	}
}

// panicOf returns the panic message of f, or "".
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

func TestRegistrationPanics(t *testing.T) {
	other := mcp.NewServer(&mcp.ServerOptions{})
	apps.AddView(other, &apps.View{URI: "ui://t/other.html", Name: "o", HTML: page})
	cases := []struct {
		name string
		add  func(s *mcp.Server)
		want []string
	}{
		{"scheme", func(s *mcp.Server) { apps.AddView(s, &apps.View{URI: "https://x/v.html", Name: "v", HTML: page}) }, []string{`"https://x/v.html"`, "view-scheme"}},
		{"bare scheme", func(s *mcp.Server) { apps.AddView(s, &apps.View{URI: "ui://", Name: "v", HTML: page}) }, []string{"view-scheme"}},
		{"no name", func(s *mcp.Server) { apps.AddView(s, &apps.View{URI: "ui://t/v", HTML: page}) }, []string{`"ui://t/v"`, "Name"}},
		{"no html", func(s *mcp.Server) { apps.AddView(s, &apps.View{URI: "ui://t/v", Name: "v"}) }, []string{"HTML or FS"}},
		{"both", func(s *mcp.Server) {
			apps.AddView(s, &apps.View{URI: "ui://t/v", Name: "v", HTML: page, FS: fstest.MapFS{}})
		}, []string{"not both"}},
		{"missing file", func(s *mcp.Server) {
			apps.AddView(s, &apps.View{URI: "ui://t/v", Name: "v", FS: fstest.MapFS{}, Path: "nope.html"})
		}, []string{`"nope.html"`}},
		{"fragment", func(s *mcp.Server) { apps.AddView(s, &apps.View{URI: "ui://t/v", Name: "v", HTML: "<div>x</div>"}) }, []string{`"ui://t/v"`, "view-html"}},
		{"http origin", func(s *mcp.Server) {
			apps.AddView(s, &apps.View{URI: "ui://t/v", Name: "v", HTML: page, CSP: &apps.CSP{ConnectDomains: []string{"http://api.example.com"}}})
		}, []string{"csp-origin", "connectDomains", "loopback"}},
		{"path in origin", func(s *mcp.Server) {
			apps.AddView(s, &apps.View{URI: "ui://t/v", Name: "v", HTML: page, CSP: &apps.CSP{FrameDomains: []string{"https://a.example.com/x"}}})
		}, []string{"csp-origin", "frameDomains"}},
		{"bare star", func(s *mcp.Server) {
			apps.AddView(s, &apps.View{URI: "ui://t/v", Name: "v", HTML: page, CSP: &apps.CSP{ResourceDomains: []string{"*"}}})
		}, []string{"csp-origin", "resourceDomains"}},
		{"quote in origin", func(s *mcp.Server) {
			apps.AddView(s, &apps.View{URI: "ui://t/v", Name: "v", HTML: page, CSP: &apps.CSP{BaseURIDomains: []string{"https://a.com'; script-src *"}}})
		}, []string{"csp-origin", "baseUriDomains"}},
		{"view of no server", func(s *mcp.Server) {
			apps.AddTool(s, &mcp.Tool{Name: "t", Description: "d"}, apps.ToolUI{View: "ui://t/other.html"}, noop)
		}, []string{`"t"`, "view-exists", "ui://t/other.html"}},
		{"tool link scheme", func(s *mcp.Server) {
			apps.AddTool(s, &mcp.Tool{Name: "t", Description: "d"}, apps.ToolUI{View: "https://x"}, noop)
		}, []string{`"t"`, "view-scheme"}},
		{"empty visibility", func(s *mcp.Server) { addLinked(s, []apps.Visibility{}) }, []string{`"t"`, "tool-visibility", "empty"}},
		{"duplicate visibility", func(s *mcp.Server) { addLinked(s, []apps.Visibility{apps.App, apps.App}) }, []string{"tool-visibility", "twice"}},
		{"unknown visibility", func(s *mcp.Server) { addLinked(s, []apps.Visibility{"user"}) }, []string{"tool-visibility", `"user"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := panicOf(func() { tc.add(mcp.NewServer(&mcp.ServerOptions{})) })
			if msg == "" {
				t.Fatal("no panic")
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("panic %q does not mention %q", msg, w)
				}
			}
		})
	}
}

func noop(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "ok", nil }

func addLinked(s *mcp.Server, vis []apps.Visibility) {
	uri := apps.AddView(s, &apps.View{URI: "ui://t/v", Name: "v", HTML: page})
	apps.AddTool(s, &mcp.Tool{Name: "t", Description: "d"}, apps.ToolUI{View: uri, Visibility: vis}, noop)
}

func TestSupportedMediaTypes(t *testing.T) {
	cases := []struct {
		ext  string
		want bool
	}{
		{`{"mimeTypes":["text/html;profile=mcp-app"]}`, true},
		{`{"mimeTypes":["text/plain","Text/HTML; Profile=mcp-app"]}`, true},
		{`{"mimeTypes":["text/html; charset=utf-8; profile=\"mcp-app\""]}`, true},
		{`{"mimeTypes":["text/html"]}`, false},
		{`{"mimeTypes":["text/html;profile=other"]}`, false},
		{`{"mimeTypes":[]}`, false},
		{`{}`, false},
		{`{"mimeTypes":"text/html;profile=mcp-app"}`, false},
		{`[1]`, false},
	}
	for _, tc := range cases {
		info := &mcp.RequestInfo{ClientCapabilities: mcp.ClientCapabilities{Extensions: map[string]json.RawMessage{apps.ExtensionID: json.RawMessage(tc.ext)}}}
		if got := apps.Supported(info); got != tc.want {
			t.Errorf("Supported(%s) = %v, want %v", tc.ext, got, tc.want)
		}
	}
	if apps.Supported(nil) || apps.Supported(&mcp.RequestInfo{}) {
		t.Error("Supported without the extension")
	}
}

// TestSupportedPerRequest: a handler sees each request's own capabilities
// in the modern era, and the session's in the legacy era.
func TestSupportedPerRequest(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{})
	mcp.AddTool(s, &mcp.Tool{Name: "ui", Description: "d"}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return fmt.Sprint(apps.Supported(req.Info)), nil
	})
	eras(t, func(t *testing.T, o []mcptest.Option, ui bool) {
		c := mcptest.NewClient(t, s, o...)
		res, err := c.Client().CallTool(context.Background(), "ui", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != fmt.Sprint(ui) {
			t.Errorf("Supported = %s, want %v", got, ui)
		}
	})
}

func TestHideWithoutUI(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{ListFilters: apps.HideWithoutUI(mcp.ListFilters{
		Tools: func(ctx context.Context, info *mcp.RequestInfo, t *mcp.Tool) bool { return t.Name != "secret" },
	})})
	uri := apps.AddView(s, &apps.View{URI: "ui://t/v", Name: "v", HTML: page})
	apps.AddTool(s, &mcp.Tool{Name: "refresh", Description: "d"}, apps.ToolUI{View: uri, Visibility: []apps.Visibility{apps.App}}, noop)
	apps.AddTool(s, &mcp.Tool{Name: "show", Description: "d"}, apps.ToolUI{View: uri}, noop)
	mcp.AddTool(s, &mcp.Tool{Name: "plain", Description: "d"}, noop)
	mcp.AddTool(s, &mcp.Tool{Name: "secret", Description: "d"}, noop)
	s.AddResource(&mcp.Resource{URI: "file:///a", Name: "a"}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "a"}}}, nil
	})
	eras(t, func(t *testing.T, o []mcptest.Option, ui bool) {
		c := mcptest.NewClient(t, s, o...)
		tools, err := c.ListTools()
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.ListResources()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range tools {
			got = append(got, x.Name)
		}
		for _, x := range res {
			got = append(got, x.URI)
		}
		want := []string{"plain", "show", "file:///a"}
		if ui {
			want = []string{"plain", "refresh", "show", "file:///a", "ui://t/v"}
		}
		slices.Sort(got)
		slices.Sort(want)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("listed (-want +got):\n%s", d)
		}
	})
}

func TestCheckBrokenFixture(t *testing.T) {
	r, err := apps.Check(context.Background(), apps.ServerSource(appsfixture.Broken()), &apps.CheckOptions{Calls: map[string]json.RawMessage{"empty": nil}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range r.Findings {
		if !slices.Contains(ids, f.Rule.ID) {
			ids = append(ids, f.Rule.ID)
		}
		if f.Object == "" || f.Detail == "" || f.Rule.Section == "" || f.Rule.Summary == "" {
			t.Errorf("incomplete finding %+v", f)
		}
	}
	slices.Sort(ids)
	if d := cmp.Diff(appsfixture.BrokenRules, ids); d != "" {
		t.Errorf("rules broken (-want +got):\n%s\nfindings:\n%s", d, strings.Join(fmtAll(r.Findings), "\n"))
	}
	if !r.Failed() {
		t.Error("Failed = false")
	}
	// Validate finds the same, but for the tool it does not call.
	var vids []string
	for _, f := range apps.Validate(appsfixture.Broken()) {
		if !slices.Contains(vids, f.Rule.ID) {
			vids = append(vids, f.Rule.ID)
		}
	}
	slices.Sort(vids)
	wantV := slices.DeleteFunc(slices.Clone(appsfixture.BrokenRules), func(id string) bool { return id == "tool-content" })
	if d := cmp.Diff(wantV, vids); d != "" {
		t.Errorf("Validate's rules (-want +got):\n%s", d)
	}
	// Each linked tool not called is listed as not checked.
	if len(r.NotChecked) != len(r.Tools)-1 {
		t.Errorf("NotChecked = %v for tools %v", r.NotChecked, r.Tools)
	}
}

func fmtAll(fs []apps.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

// TestListsPublicUnlessHidden: without HideWithoutUI the lists do not vary
// by caller and stay public; with it they are private.
func TestListsPublicUnlessHidden(t *testing.T) {
	for _, hide := range []bool{false, true} {
		o := &mcp.ServerOptions{}
		if hide {
			o.ListFilters = apps.HideWithoutUI(mcp.ListFilters{})
		}
		s := mcp.NewServer(o)
		uri := apps.AddView(s, &apps.View{URI: "ui://t/v", Name: "v", HTML: page})
		apps.AddTool(s, &mcp.Tool{Name: "show", Description: "d"}, apps.ToolUI{View: uri}, noop)
		c := mcptest.NewClient(t, s)
		want := "public"
		if hide {
			want = "private"
		}
		for _, method := range []string{"tools/list", "resources/list"} {
			raw, err := c.Request(method, nil)
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				CacheScope string `json:"cacheScope"`
			}
			json.Unmarshal(raw, &r)
			if r.CacheScope != want {
				t.Errorf("hide=%v: %s cacheScope %q, want %q", hide, method, r.CacheScope, want)
			}
		}
	}
}

// TestCheckReadsAtMostMaxViews: a server listing more views than
// MaxViews gets the rest reported as not checked, not read.
func TestCheckReadsAtMostMaxViews(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{})
	reads := 0
	for i := range apps.MaxViews + 5 {
		s.AddResource(&mcp.Resource{URI: fmt.Sprintf("ui://many/%d.html", i), Name: "v", MIMEType: apps.MIMEType}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
			reads++ // Check reads one view at a time
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{MIMEType: apps.MIMEType, Text: page}}}, nil
		})
	}
	r, err := apps.Check(context.Background(), apps.ServerSource(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	if reads != apps.MaxViews || len(r.Views) != apps.MaxViews+5 || len(r.NotChecked) != 1 || !strings.Contains(r.NotChecked[0], "(5 more)") {
		t.Errorf("reads %d, views %d, not checked %v", reads, len(r.Views), r.NotChecked)
	}
}
