package apps

import (
	"errors"
	"net"
	"strconv"
	"strings"
)

// Level says how strongly the specification states a rule.
type Level string

const (
	// Must: breaking the rule breaks hosts; `mcpkit apps check` exits 1.
	Must Level = "MUST"
	// Should: a recommendation; reported, but the check still passes.
	Should Level = "SHOULD"
)

// Rule is one rule of the specification that Check applies. Summary is
// our one-line paraphrase, not the specification's text; Section names the
// section of the specification (2026-01-26) that states it.
type Rule struct {
	ID      string
	Level   Level
	Summary string
	Section string
}

// The rules Check applies, in the order it reports them.
var (
	RuleScheme      = Rule{"view-scheme", Must, "a view's URI starts with ui://", "UI Resource Format"}
	RuleMIME        = Rule{"view-mime", Must, "a view's contents are served as text/html;profile=mcp-app", "UI Resource Format"}
	RuleListMIME    = Rule{"view-list-mime", Should, "a view's list entry names text/html;profile=mcp-app", "UI Resource Format"}
	RuleContent     = Rule{"view-content", Must, "a view's contents carry the HTML as text or as a base64 blob", "UI Resource Format"}
	RuleHTML        = Rule{"view-html", Must, "a view's HTML is a document: it starts with <!doctype html or <html", "UI Resource Format"}
	RuleExists      = Rule{"view-exists", Must, "every view a tool links to can be read from the same server", "Resource Discovery"}
	RuleMetaKeys    = Rule{"tool-meta-keys", Should, "a linked tool carries both _meta.ui.resourceUri and the flat ui/resourceUri, with the same URI", "Resource Discovery"}
	RuleMetaShape   = Rule{"meta-shape", Must, "_meta.ui has the specified shape (objects, strings, string arrays, booleans)", "UI Resource Format"}
	RuleCSPOrigin   = Rule{"csp-origin", Must, "each CSP domain is an origin scheme://host[:port], https or wss (http and ws only on loopback)", "UI Resource Format"}
	RuleVisibility  = Rule{"tool-visibility", Must, "visibility is a non-empty list of model and app without duplicates", "Resource Discovery"}
	RuleToolContent = Rule{"tool-content", Must, "a linked tool's result carries meaningful content for text-only hosts", "Client<>Server Capability Negotiation"}
)

// Rules lists every rule Check applies.
var Rules = []Rule{RuleScheme, RuleMIME, RuleListMIME, RuleContent, RuleHTML, RuleExists, RuleMetaKeys, RuleMetaShape, RuleCSPOrigin, RuleVisibility, RuleToolContent}

// checkOrigin reports why s is not an origin a view's CSP may name:
// scheme://host[:port] with scheme https or wss (http and ws only for a
// loopback host: localhost, 127.0.0.0/8, [::1]), an optional "*." at the
// start of the host, and nothing else: no path, query, fragment, user
// info, quotes, spaces or bare "*". An origin it accepts contains no
// character that could end a CSP source expression or directive.
func checkOrigin(s string) error {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return errors.New("not scheme://host[:port]")
	}
	switch scheme {
	case "https", "wss", "http", "ws":
	default:
		return errors.New("scheme " + strconv.Quote(scheme) + " is not https or wss")
	}
	if i := strings.IndexAny(rest, "/?#@"); i >= 0 {
		return errors.New("an origin has no path, query, fragment or user info")
	}
	host, port := rest, ""
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return errors.New("unclosed [ in the host")
		}
		host, port = rest[:end+1], rest[end+1:]
		if ip := net.ParseIP(host[1 : len(host)-1]); ip == nil || ip.To4() != nil {
			return errors.New("not an IPv6 address between [ and ]")
		}
	} else if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		host, port = rest[:i], rest[i:]
	}
	if port != "" {
		if port[0] != ':' {
			return errors.New("junk after the host")
		}
		n, err := strconv.Atoi(port[1:])
		if err != nil || n < 1 || n > 65535 || port[1] == '+' || port[1] == '-' {
			return errors.New("port is not a number from 1 to 65535")
		}
	}
	if !strings.HasPrefix(host, "[") {
		name := strings.TrimPrefix(host, "*.")
		if name == "" {
			return errors.New("no host")
		}
		for _, label := range strings.Split(name, ".") {
			if label == "" || label[0] == '-' || label[len(label)-1] == '-' || len(label) > 63 {
				return errors.New("host " + strconv.Quote(host) + " is not a DNS name or address")
			}
			for i := 0; i < len(label); i++ {
				c := label[i]
				if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
					return errors.New("host " + strconv.Quote(host) + " is not a DNS name or address")
				}
			}
		}
	}
	if (scheme == "http" || scheme == "ws") && !loopback(host) {
		return errors.New(scheme + " is allowed only on loopback hosts; use https or wss")
	}
	return nil
}

// loopback reports whether host (from checkOrigin) is a loopback name or
// address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// looksLikeHTML is the stated heuristic for "a valid HTML5 document" (not
// a validator): after an optional UTF-8 byte order mark, white space and
// HTML comments, the text starts with <!doctype html or <html (any case),
// followed by white space or '>'.
func looksLikeHTML(s string) bool {
	s = strings.TrimPrefix(s, "\uFEFF")
	for {
		s = strings.TrimLeft(s, " \t\r\n\f")
		if !strings.HasPrefix(s, "<!--") {
			break
		}
		end := strings.Index(s[4:], "-->")
		if end < 0 {
			return false
		}
		s = s[4+end+3:]
	}
	for _, p := range []string{"<!doctype html", "<html"} {
		if len(s) > len(p) && strings.EqualFold(s[:len(p)], p) {
			switch s[len(p)] {
			case ' ', '\t', '\r', '\n', '\f', '>':
				return true
			}
		}
	}
	return false
}
