package apps

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/mcpkit/mcpkit/mcp"
)

// CSP lists the origins a view needs beyond its own document; hosts build
// the iframe's Content-Security-Policy from it and block everything else.
// Each entry is an origin, scheme://host[:port], https or wss (http and ws
// only on loopback), with an optional "*." at the start of the host.
type CSP struct {
	// ConnectDomains may be fetched, or opened as WebSockets (connect-src).
	ConnectDomains []string `json:"connectDomains,omitempty"`
	// ResourceDomains may serve scripts, styles, images, fonts and media.
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	// FrameDomains may be loaded in nested iframes (frame-src).
	FrameDomains []string `json:"frameDomains,omitempty"`
	// BaseURIDomains may be the document's base URI (base-uri).
	BaseURIDomains []string `json:"baseUriDomains,omitempty"`
}

// Permissions are the browser features a view asks for; hosts may grant
// them through the iframe's allow attribute, so a view must still detect
// them.
type Permissions struct {
	Camera         bool
	Microphone     bool
	Geolocation    bool
	ClipboardWrite bool
}

// MarshalJSON implements json.Marshaler: each requested feature is an
// empty object.
func (p Permissions) MarshalJSON() ([]byte, error) {
	var names []string
	for _, f := range []struct {
		on   bool
		name string
	}{{p.Camera, "camera"}, {p.Microphone, "microphone"}, {p.Geolocation, "geolocation"}, {p.ClipboardWrite, "clipboardWrite"}} {
		if f.on {
			names = append(names, `"`+f.name+`":{}`)
		}
	}
	return []byte("{" + strings.Join(names, ",") + "}"), nil
}

// View is an HTML view as AddView registers it. Exactly one of HTML and FS
// gives the document.
type View struct {
	// URI identifies the view; it must start with ui://, such as
	// "ui://weather/dashboard.html".
	URI string
	// Name is the resource's name (required); Title and Description are
	// optional.
	Name, Title, Description string

	// HTML is the document.
	HTML string
	// FS and Path name the document in a file system (an embed.FS, or
	// os.DirFS). It is read once, by AddView.
	FS   fs.FS
	Path string

	// CSP lists the origins the view needs; nil asks for the host's
	// restrictive default (no outside origin at all).
	CSP *CSP
	// Permissions are the browser features the view asks for.
	Permissions Permissions
	// Domain asks the host for a dedicated sandbox origin; its format is
	// host-specific.
	Domain string
	// PrefersBorder, when set, asks the host for (true) or against
	// (false) a visible border and background.
	PrefersBorder *bool

	// HashURI inserts the first 12 hex digits of the document's SHA-256
	// before the URI's extension (ui://demo/counter.html becomes
	// ui://demo/counter-<hash>.html), so that a changed document gets a new
	// URI and hosts may cache a read for long: reads then carry CacheTTL,
	// or a day when it is zero.
	HashURI bool
	// CacheTTL overrides the caching hint (ttlMs) of reads of the view.
	CacheTTL time.Duration
}

// uiMeta is _meta.ui of a view, on its list entry and on its contents.
type uiMeta struct {
	CSP           *CSP         `json:"csp,omitempty"`
	Permissions   *Permissions `json:"permissions,omitempty"`
	Domain        string       `json:"domain,omitempty"`
	PrefersBorder *bool        `json:"prefersBorder,omitempty"`
}

// registered is what AddView recorded about the views of one server, so
// that AddTool can check its links.
type registered struct {
	mu    sync.Mutex
	views map[string]bool
}

var (
	regMu   sync.Mutex
	servers = map[weak.Pointer[mcp.Server]]*registered{}
)

// viewsOf returns the record of s, creating it on first use; it goes away
// with s.
func viewsOf(s *mcp.Server) *registered {
	k := weak.Make(s)
	regMu.Lock()
	defer regMu.Unlock()
	r := servers[k]
	if r == nil {
		r = &registered{views: map[string]bool{}}
		servers[k] = r
		runtime.AddCleanup(s, func(k weak.Pointer[mcp.Server]) {
			regMu.Lock()
			delete(servers, k)
			regMu.Unlock()
		}, k)
	}
	return r
}

// AddView registers v on s as a resource served as MIMEType, with v's
// _meta.ui on both its resources/list entry and its contents, and returns
// the URI it is served at (v.URI, or the content-hash URI with HashURI):
// link tools to that URI. Register views before the tools that link them.
// It panics, naming the view and the rule, on a URI that does not start
// with ui://, a missing name, neither or both of HTML and FS, a document
// that cannot be read or does not look like HTML (see Rules: after an
// optional BOM, white space and comments it starts with <!doctype html or
// <html), or a CSP entry that is not an allowed origin. It replaces a view
// with the same URI and is safe to call while serving.
func AddView(s *mcp.Server, v *View) string {
	what := fmt.Sprintf("apps.AddView %q", v.URI)
	fail := func(rule Rule, detail string) {
		panic(fmt.Sprintf("%s: %s (%s: %s)", what, detail, rule.ID, rule.Summary))
	}
	if !strings.HasPrefix(v.URI, Scheme) || len(v.URI) == len(Scheme) {
		fail(RuleScheme, "the URI does not start with ui://")
	}
	if v.Name == "" {
		panic(what + ": a view needs a Name")
	}
	html := v.HTML
	switch {
	case v.FS != nil && html != "":
		panic(what + ": set HTML or FS, not both")
	case v.FS != nil:
		b, err := fs.ReadFile(v.FS, v.Path)
		if err != nil {
			panic(fmt.Sprintf("%s: reading %q: %v", what, v.Path, err))
		}
		html = string(b)
	case html == "":
		panic(what + ": a view needs HTML or FS")
	}
	if !looksLikeHTML(html) {
		fail(RuleHTML, "the document does not start with <!doctype html or <html")
	}
	if v.CSP != nil {
		for _, f := range cspFields(v.CSP) {
			for _, o := range f.list {
				if err := checkOrigin(o); err != nil {
					fail(RuleCSPOrigin, fmt.Sprintf("csp.%s %q: %v", f.name, o, err))
				}
			}
		}
	}
	uri, ttl := v.URI, v.CacheTTL
	if v.HashURI {
		uri = hashURI(uri, html)
		if ttl == 0 {
			ttl = 24 * time.Hour
		}
	}
	m := uiMeta{CSP: v.CSP, Domain: v.Domain, PrefersBorder: v.PrefersBorder}
	if v.Permissions != (Permissions{}) {
		p := v.Permissions
		m.Permissions = &p
	}
	var meta mcp.Meta
	if m != (uiMeta{}) {
		meta = mcp.Meta{"ui": m}
	}
	s.AddResource(&mcp.Resource{URI: uri, Name: v.Name, Title: v.Title, Description: v.Description, MIMEType: MIMEType, Size: ptr(int64(len(html))), Meta: meta, CacheTTL: ttl},
		func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: MIMEType, Text: html, Meta: meta}}}, nil
		})
	r := viewsOf(s)
	r.mu.Lock()
	r.views[uri] = true
	r.mu.Unlock()
	return uri
}

func ptr[T any](v T) *T { return &v }

// hashURI inserts the first 12 hex digits of the SHA-256 of html before
// the extension of uri's last path segment.
func hashURI(uri, html string) string {
	sum := sha256.Sum256([]byte(html))
	h := hex.EncodeToString(sum[:])[:12]
	ext := path.Ext(uri)
	if strings.Contains(ext, "/") || len(ext) == len(uri) {
		ext = ""
	}
	return strings.TrimSuffix(uri, ext) + "-" + h + ext
}

// cspField is one list of a CSP, with its wire name.
type cspField struct {
	name string
	list []string
}

func cspFields(c *CSP) []cspField {
	return []cspField{{"connectDomains", c.ConnectDomains}, {"resourceDomains", c.ResourceDomains}, {"frameDomains", c.FrameDomains}, {"baseUriDomains", c.BaseURIDomains}}
}
