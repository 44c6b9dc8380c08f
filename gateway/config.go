package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// MaxConfigBytes bounds the size of a configuration file Load reads.
const MaxConfigBytes = 1 << 20

// Config is a gateway's configuration, as read from YAML by Parse or Load:
//
//	servers:
//	  everything:
//	    command: [npx, -y, "@modelcontextprotocol/server-everything"]
//	    env: {LOG_LEVEL: info}
//	  files:
//	    url: http://127.0.0.1:9000/mcp
//	    headers: {Authorization: "Bearer ${FILES_TOKEN}"}
//	resources:
//	  prefer: files
//
// A Config is a plain value: it is not safe to change while a Gateway made
// from it runs.
type Config struct {
	// Servers are the backends, in the file's order.
	Servers []ServerConfig
	// Prefer names the server a resource URI routes to when several
	// servers' templates match it (resources.prefer); "" means none.
	Prefer string
}

// ServerConfig is one backend of a Config: a stdio command or a URL.
type ServerConfig struct {
	// Name is the server's name (^[a-z0-9-]{1,32}$), the prefix of its
	// tools and prompts.
	Name string
	// Command is the program and its arguments, for a stdio backend.
	Command []string
	// Env is the command's own environment, ${NAME} expanded.
	Env map[string]string
	// InheritEnv gives the command the gateway's whole environment (plus
	// Env); otherwise it gets only PATH, HOME, LANG, TMPDIR and Env.
	InheritEnv bool
	// Dir is the command's working directory; "" is the gateway's.
	Dir string
	// URL is the MCP endpoint of an HTTP backend (either era).
	URL string
	// Headers are sent with every request to URL, ${NAME} expanded.
	Headers map[string]string
	// NoPrefix (prefix: false) serves the server's tools and prompts under
	// their own names. At most one server may set it.
	NoPrefix bool
	// Timeout (timeout: 30s) bounds one tools/call, prompts/get or
	// resources/read round on the server; 0 means none beyond the caller's.
	Timeout time.Duration
	// Required (required: true) makes the gateway not ready (/readyz 503)
	// while every required server is down.
	Required bool
	// AllowTools, when not empty, are the only tools of the server the
	// gateway lists and calls (tools.allow, the server's own names);
	// DenyTools are left out (tools.deny).
	AllowTools, DenyTools []string
	// Scopes (scopes: [files:read]) are the OAuth scopes a caller's
	// access token must all grant to see and use anything of the server:
	// its tools, prompts, resources, templates and completions.
	// ToolScopes (tool_scopes: {write: [files:write]}) adds scopes for
	// single tools (by the server's own names). See Backend.Scopes.
	Scopes     []string
	ToolScopes map[string][]string
	// ScopesLine is the line of the first scopes or tool_scopes key (0:
	// none), for errors about where the scope policy cannot apply.
	ScopesLine int
	// RateLimit (rate_limit: {rate: 10/s, burst: 20}) bounds the calls
	// each caller makes to the server, per replica; nil means none. See
	// Backend.RateLimit.
	RateLimit *RateLimit
	// Tasks (tasks: none, optional or required) is the task support of the
	// server's tools that TaskTools does not name: whether a tools/call may
	// run as a task of the gateway's front. TaskTools (task_tools:
	// {slow: required, confirm: "optional,input-starts-task"}) sets it per
	// tool, by the server's own names, in the form of mcpkit bridge's
	// --task-tool. See Backend.Tasks.
	Tasks     mcp.TaskSupport
	TaskTools map[string]bridge.TaskTool
	// Line is the line of the server's name in the file.
	Line int
}

// RateLimit is a token bucket: a caller may make Burst calls at once, and
// Count calls every Per on average. Its text form (rate_limit.rate in the
// configuration) is COUNT/UNIT with UNIT s, m or h: "10/s", "600/m".
type RateLimit struct {
	Count int
	Per   time.Duration
	// Burst is the bucket's size; 0 means Count.
	Burst int
}

// MaxRate bounds the Count and Burst of a RateLimit in a configuration.
const MaxRate = 1_000_000

// String returns the rate as the configuration writes it ("10/s").
func (r RateLimit) String() string {
	unit := r.Per.String()
	switch r.Per {
	case time.Second:
		unit = "s"
	case time.Minute:
		unit = "m"
	case time.Hour:
		unit = "h"
	}
	return strconv.Itoa(r.Count) + "/" + unit
}

// ParseRate parses the COUNT/UNIT form of a rate: COUNT a positive
// integer up to MaxRate, UNIT s, m or h.
func ParseRate(text string) (RateLimit, error) {
	n, unit, ok := strings.Cut(text, "/")
	count, err := strconv.Atoi(n)
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[unit]
	if !ok || err != nil || count <= 0 || count > MaxRate || per == 0 || n != strconv.Itoa(count) {
		return RateLimit{}, fmt.Errorf("rate %q: want COUNT/UNIT, COUNT from 1 to %d and UNIT s, m or h, such as 10/s", text, MaxRate)
	}
	return RateLimit{Count: count, Per: per}, nil
}

// fingerprint identifies what the server's transport connects to: its
// command, env, inherit_env, dir, url and headers (not its policy).
func (s *ServerConfig) fingerprint() string {
	b, _ := json.Marshal([]any{s.Command, s.Env, s.InheritEnv, s.Dir, s.URL, s.Headers})
	return string(b)
}

// secrets are the values of the server's configuration that a reason it
// is down must not show: header and env values, the URL's password.
func (s *ServerConfig) secrets() []string {
	var out []string
	for _, m := range []map[string]string{s.Headers, s.Env} {
		for _, v := range m {
			out = append(out, v)
			// "Bearer TOKEN": the token alone too.
			if _, rest, ok := strings.Cut(v, " "); ok {
				out = append(out, rest)
			}
		}
	}
	if u, err := url.Parse(s.URL); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		}
	}
	return out
}

// inheritedEnv are the variables a backend command gets from the gateway
// without inherit_env.
var inheritedEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// Transport returns the transport of a new session to the backend. A
// command gets the environment described at InheritEnv, read from the
// gateway's environment at each call.
func (s *ServerConfig) Transport(stderr io.Writer) client.Transport {
	if s.URL != "" {
		h := make(map[string][]string, len(s.Headers))
		for k, v := range s.Headers {
			h[k] = []string{v}
		}
		return &client.HTTPTransport{URL: s.URL, Header: h}
	}
	var env []string
	if !s.InheritEnv {
		for _, k := range inheritedEnv {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	return &client.CommandTransport{Command: s.Command[0], Args: s.Command[1:], Env: env, ReplaceEnv: !s.InheritEnv, Dir: s.Dir, Stderr: stderr}
}

// Load reads and parses the configuration file path, expanding ${NAME}
// from the process's environment. Errors name the file and the line.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxConfigBytes)
	}
	return Parse(path, data, os.LookupEnv)
}

// Parse parses a configuration; file names it in errors, and lookup
// resolves ${NAME} in env and headers values (nil: no variable is set).
// Every error names the line it is about.
func Parse(file string, data []byte, lookup func(string) (string, bool)) (*Config, error) {
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	p := &parser{file: file, lookup: lookup}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: the configuration is empty: it needs servers", file)
	}
	cfg, err := p.config(doc.Content[0])
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

type parser struct {
	file   string
	lookup func(string) (string, bool)
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.file, n.Line, fmt.Sprintf(format, args...))
}

// members iterates over a mapping node's key and value nodes, refusing
// anything else, duplicate keys and keys outside known.
func (p *parser) members(n *yaml.Node, what string, known []string, f func(k string, kn, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "%s: want a mapping", what)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, v := n.Content[i], n.Content[i+1]
		if kn.Kind != yaml.ScalarNode {
			return p.errf(kn, "%s: a key is not a string", what)
		}
		k := kn.Value
		if seen[k] {
			return p.errf(kn, "%s: %q appears twice", what, k)
		}
		seen[k] = true
		if known != nil && !contains(known, k) {
			return p.errf(kn, "%s: unknown key %q (known: %s)", what, k, strings.Join(known, ", "))
		}
		if err := f(k, kn, v); err != nil {
			return err
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// nameRE is the form of a server name.
var nameRE = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

func (p *parser) config(root *yaml.Node) (*Config, error) {
	cfg := &Config{}
	var preferNode *yaml.Node
	err := p.members(root, "the configuration", []string{"servers", "resources"}, func(k string, _, v *yaml.Node) error {
		switch k {
		case "servers":
			return p.members(v, "servers", nil, func(name string, kn, v *yaml.Node) error {
				if !nameRE.MatchString(name) {
					return p.errf(kn, "server name %q: want 1 to 32 of a-z, 0-9 and -", name)
				}
				s, err := p.server(name, kn, v)
				if err != nil {
					return err
				}
				cfg.Servers = append(cfg.Servers, *s)
				return nil
			})
		case "resources":
			return p.members(v, "resources", []string{"prefer"}, func(_ string, _, v *yaml.Node) error {
				preferNode = v
				return p.scalar(v, "resources.prefer", "!!str", &cfg.Prefer)
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(cfg.Servers) == 0 {
		return nil, p.errf(root, "no servers")
	}
	var unprefixed *ServerConfig
	for i := range cfg.Servers {
		s := &cfg.Servers[i]
		if !s.NoPrefix {
			continue
		}
		if unprefixed != nil {
			return nil, fmt.Errorf("%s:%d: server %q: prefix: false is already set on server %q (line %d); at most one server may go without a prefix", p.file, s.Line, s.Name, unprefixed.Name, unprefixed.Line)
		}
		unprefixed = s
	}
	if cfg.Prefer != "" && !slicesContainsName(cfg.Servers, cfg.Prefer) {
		return nil, p.errf(preferNode, "resources.prefer: no server is named %q", cfg.Prefer)
	}
	return cfg, nil
}

func slicesContainsName(ss []ServerConfig, name string) bool {
	for i := range ss {
		if ss[i].Name == name {
			return true
		}
	}
	return false
}

func (p *parser) server(name string, kn, n *yaml.Node) (*ServerConfig, error) {
	s := &ServerConfig{Name: name, Line: kn.Line}
	what := "server " + name
	var envNode, headersNode *yaml.Node
	err := p.members(n, what, []string{"command", "env", "inherit_env", "dir", "url", "headers", "prefix", "tools", "required", "timeout", "scopes", "tool_scopes", "rate_limit", "tasks", "task_tools"}, func(k string, kn, v *yaml.Node) error {
		switch k {
		case "command":
			if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				return p.errf(v, "%s: command: want a list of strings, the program first", what)
			}
			for _, a := range v.Content {
				var arg string
				if err := p.scalar(a, what+": command", "", &arg); err != nil {
					return err
				}
				s.Command = append(s.Command, arg)
			}
			if s.Command[0] == "" {
				return p.errf(v, "%s: command: the program is empty", what)
			}
		case "env":
			envNode = v
			m, err := p.expandMap(v, what+": env")
			if err != nil {
				return err
			}
			for k := range m {
				if k == "" || strings.ContainsAny(k, "=\x00") {
					return p.errf(v, "%s: env: %q is not a variable name", what, k)
				}
			}
			s.Env = m
		case "headers":
			headersNode = v
			m, err := p.expandMap(v, what+": headers")
			if err != nil {
				return err
			}
			s.Headers = m
		case "timeout":
			var text string
			if err := p.scalar(v, what+": timeout", "!!str", &text); err != nil {
				return err
			}
			d, err := time.ParseDuration(text)
			if err != nil || d <= 0 {
				return p.errf(v, "%s: timeout %q: want a positive duration such as 30s", what, text)
			}
			s.Timeout = d
		case "required":
			return p.scalar(v, what+": required", "!!bool", &s.Required)
		case "scopes":
			if s.ScopesLine == 0 {
				s.ScopesLine = kn.Line
			}
			list, err := p.scopes(v, what+": scopes")
			s.Scopes = list
			return err
		case "tool_scopes":
			if s.ScopesLine == 0 {
				s.ScopesLine = kn.Line
			}
			s.ToolScopes = map[string][]string{}
			return p.members(v, what+": tool_scopes", nil, func(tool string, _, v *yaml.Node) error {
				list, err := p.scopes(v, what+": tool_scopes: "+tool)
				s.ToolScopes[tool] = list
				return err
			})
		case "rate_limit":
			rl := &RateLimit{}
			var rateNode *yaml.Node
			err := p.members(v, what+": rate_limit", []string{"rate", "burst"}, func(k string, _, v *yaml.Node) error {
				if k == "burst" {
					if err := p.scalar(v, what+": rate_limit: burst", "!!int", &rl.Burst); err != nil {
						return err
					}
					if rl.Burst <= 0 || rl.Burst > MaxRate {
						return p.errf(v, "%s: rate_limit: burst %d: want 1 to %d", what, rl.Burst, MaxRate)
					}
					return nil
				}
				rateNode = v
				var text string
				if err := p.scalar(v, what+": rate_limit: rate", "!!str", &text); err != nil {
					return err
				}
				r, err := ParseRate(text)
				if err != nil {
					return p.errf(v, "%s: rate_limit: %v", what, err)
				}
				rl.Count, rl.Per = r.Count, r.Per
				return nil
			})
			if err != nil {
				return err
			}
			if rateNode == nil {
				return p.errf(v, "%s: rate_limit: want rate (such as 10/s), and burst if not the rate's count", what)
			}
			s.RateLimit = rl
		case "tasks":
			var text string
			if err := p.scalar(v, what+": tasks", "!!str", &text); err != nil {
				return err
			}
			if err := s.Tasks.UnmarshalText([]byte(text)); err != nil {
				return p.errf(v, "%s: tasks: %v", what, err)
			}
		case "task_tools":
			s.TaskTools = map[string]bridge.TaskTool{}
			return p.members(v, what+": task_tools", nil, func(tool string, kn, v *yaml.Node) error {
				if tool == "" {
					return p.errf(kn, "%s: task_tools: an empty tool name", what)
				}
				var text string
				if err := p.scalar(v, what+": task_tools: "+tool, "!!str", &text); err != nil {
					return err
				}
				var t bridge.TaskTool
				if err := t.UnmarshalText([]byte(text)); err != nil {
					return p.errf(v, "%s: task_tools: %s: %v", what, tool, err)
				}
				s.TaskTools[tool] = t
				return nil
			})
		case "inherit_env":
			return p.scalar(v, what+": inherit_env", "!!bool", &s.InheritEnv)
		case "prefix":
			prefix := true
			if err := p.scalar(v, what+": prefix", "!!bool", &prefix); err != nil {
				return err
			}
			s.NoPrefix = !prefix
		case "dir":
			return p.scalar(v, what+": dir", "", &s.Dir)
		case "tools":
			return p.members(v, what+": tools", []string{"allow", "deny"}, func(k string, _, v *yaml.Node) error {
				list, err := p.strings(v, what+": tools: "+k)
				if k == "allow" {
					s.AllowTools = list
				} else {
					s.DenyTools = list
				}
				return err
			})
		case "url":
			if err := p.scalar(v, what+": url", "", &s.URL); err != nil {
				return err
			}
			u, err := url.Parse(s.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return p.errf(v, "%s: url %q: want an http or https URL", what, s.URL)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch {
	case len(s.Command) > 0 && s.URL != "":
		return nil, p.errf(kn, "%s: both command and url; want one", what)
	case len(s.Command) == 0 && s.URL == "":
		return nil, p.errf(kn, "%s: want command or url", what)
	case s.URL != "" && (envNode != nil || s.InheritEnv || s.Dir != ""):
		return nil, p.errf(kn, "%s: env, inherit_env and dir are for a command, not a url", what)
	case len(s.Command) > 0 && headersNode != nil:
		return nil, p.errf(headersNode, "%s: headers are for a url, not a command", what)
	}
	return s, nil
}

// scopes decodes a list of OAuth scopes: printable ASCII without spaces,
// quotes or backslashes (RFC 6749's scope-token).
func (p *parser) scopes(n *yaml.Node, what string) ([]string, error) {
	list, err := p.strings(n, what)
	if err != nil {
		return nil, err
	}
	for i, sc := range list {
		for _, r := range sc {
			if r < 0x21 || r > 0x7e || r == '"' || r == '\\' {
				return nil, p.errf(n.Content[i], "%s: %q is not a scope (printable ASCII without spaces, quotes or backslashes)", what, sc)
			}
		}
	}
	return list, nil
}

// strings decodes a list of non-empty strings.
func (p *parser) strings(n *yaml.Node, what string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "%s: want a list of names", what)
	}
	out := []string{}
	for _, e := range n.Content {
		var v string
		if err := p.scalar(e, what, "!!str", &v); err != nil {
			return nil, err
		}
		if v == "" {
			return nil, p.errf(e, "%s: an empty name", what)
		}
		out = append(out, v)
	}
	return out, nil
}

// scalar decodes a scalar node into v; tag, when not "", is the tag it
// must have (so that "yes" is not taken for a bool, nor 1 for a string).
func (p *parser) scalar(n *yaml.Node, what, tag string, v any) error {
	if n.Kind != yaml.ScalarNode || (tag != "" && n.ShortTag() != tag) || (tag == "" && n.ShortTag() != "!!str" && n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		want := "a string"
		switch tag {
		case "!!bool":
			want = "true or false"
		case "!!int":
			want = "a whole number"
		}
		return p.errf(n, "%s: want %s", what, want)
	}
	if err := n.Decode(v); err != nil {
		return p.errf(n, "%s: %v", what, err)
	}
	return nil
}

// expandMap decodes a mapping of strings and expands its values.
func (p *parser) expandMap(n *yaml.Node, what string) (map[string]string, error) {
	m := map[string]string{}
	err := p.members(n, what, nil, func(k string, _, v *yaml.Node) error {
		var raw string
		if err := p.scalar(v, what+": "+k, "", &raw); err != nil {
			return err
		}
		x, err := Expand(raw, p.lookup)
		if err != nil {
			return p.errf(v, "%s: %s: %v", what, k, err)
		}
		m[k] = x
		return nil
	})
	return m, err
}

// Expand replaces ${NAME} in s with lookup(NAME) and $$ with $. A
// variable that is not set, a $ followed by anything else, and an
// unterminated or malformed ${ are errors.
func Expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		s = s[i+1:]
		switch {
		case strings.HasPrefix(s, "$"):
			b.WriteByte('$')
			s = s[1:]
		case strings.HasPrefix(s, "{"):
			end := strings.IndexByte(s, '}')
			if end < 0 {
				return "", errors.New("an unterminated ${")
			}
			name := s[1:end]
			if !varRE.MatchString(name) {
				return "", fmt.Errorf("${%s}: not a variable name (letters, digits and _, not first a digit)", name)
			}
			v, ok := lookup(name)
			if !ok {
				return "", fmt.Errorf("the variable %s is not set", name)
			}
			b.WriteString(v)
			s = s[end+1:]
		default:
			return "", errors.New("a $ not followed by {NAME} or $ (write $$ for a dollar sign)")
		}
	}
}

var varRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
