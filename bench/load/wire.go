// Package load is the benchmark harness: the requests every implementation is
// sent, the checks every response must pass, a keep-alive HTTP/1.1 client and
// a pipelining stdio client that drive a server in a closed loop, and the
// process handling that measures a server from outside (CPU time, peak RSS,
// time to the first answered server/discover).
package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/mcpkit/mcpkit/bench/servers"
)

// The two request cases.
const (
	Discover = "server/discover"
	Call     = "tools/call"
)

// LegacyCall is tools/call in the 2025-11-25 era: the connection is
// initialized once (initialize, notifications/initialized), then every
// request is a plain tools/call without _meta. Over HTTP every connection
// has its own session: the Mcp-Session-Id the server issued and
// MCP-Protocol-Version 2025-11-25 go with each call. It runs on a fresh
// server process (StartLegacy): a stdio connection that spoke the modern
// era may refuse initialize, and the peers serve legacy HTTP clients only
// in their stateful mode.
const LegacyCall = "legacy tools/call"

// The overload cases: tools/call of the tools burn (about 1 ms of CPU) and
// sleep (50 ms), with the same arguments and answers as Call's echo.
const (
	CallBurn  = "tools/call burn"
	CallSleep = "tools/call sleep"
)

// callTool returns the tool a tools/call case calls, and whether method is
// one of them.
func callTool(method string) (string, bool) {
	switch method {
	case Call, LegacyCall:
		return servers.ToolName, true
	case CallBurn:
		return servers.BurnTool, true
	case CallSleep:
		return servers.SleepTool, true
	}
	return "", false
}

// LegacyVersion is the revision the legacy case initializes with.
const LegacyVersion = "2025-11-25"

// Methods lists the modern cases in report order (HTTP, stdio, in-process).
var Methods = []string{Discover, Call}

// AllMethods lists every case in report order; LegacyCall is stdio only.
var AllMethods = []string{Discover, Call, LegacyCall}

// ProtocolVersion is the revision every request speaks.
const ProtocolVersion = "2026-07-28"

// CallText is the text sent to the echo tool.
const CallText = "hello"

// requestMeta is the _meta of every request: what the official conformance
// harness sends (§2.1 of FIXTURES.md), so that servers decode a realistic
// set of client capabilities.
const requestMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0.0"},` +
	`"io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}}`

// bodyParts returns the request body of method around its id.
func bodyParts(method string) (prefix, suffix string) {
	prefix = `{"jsonrpc":"2.0","id":`
	switch method {
	case Discover:
		suffix = `,"method":"server/discover","params":{` + requestMeta + `}}`
	case Call, CallBurn, CallSleep:
		tool, _ := callTool(method)
		suffix = `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"text":"` + CallText + `"},` + requestMeta + `}}`
	case LegacyCall:
		suffix = `,"method":"tools/call","params":{"name":"` + servers.ToolName + `","arguments":{"text":"` + CallText + `"}}}`
	default:
		panic("load: unknown method " + method)
	}
	return prefix, suffix
}

// AppendBody appends the JSON-RPC request of method with the given id.
func AppendBody(dst []byte, method string, id int64) []byte {
	p, s := bodyParts(method)
	dst = append(dst, p...)
	dst = strconv.AppendInt(dst, id, 10)
	return append(dst, s...)
}

// Headers returns the HTTP request headers a 2026-07-28 client sends with
// method, besides Host and Content-Length.
func Headers(method string) [][2]string {
	if method == LegacyCall {
		// A 2025-11-25 client: no Mcp-Method or Mcp-Name; the session's
		// Mcp-Session-Id is added per connection.
		return [][2]string{
			{"Content-Type", "application/json"},
			{"Accept", "application/json, text/event-stream"},
			{"Mcp-Protocol-Version", LegacyVersion},
		}
	}
	tool, isCall := callTool(method)
	wire := method
	if isCall {
		wire = Call
	}
	h := [][2]string{
		{"Content-Type", "application/json"},
		{"Accept", "application/json, text/event-stream"},
		{"Mcp-Protocol-Version", ProtocolVersion},
		{"Mcp-Method", wire},
	}
	if isCall {
		h = append(h, [2]string{"Mcp-Name", tool})
	}
	return h
}

// Transport names.
const (
	HTTP  = "http"
	Stdio = "stdio"
)

// CheckDeep fully checks the response resp of impl to request id of method
// on transport: it decodes the JSON and checks every field the benchmark
// server is configured to send. The HTTP floor must send its fixed body and
// the stdio floor must echo the request line.
func CheckDeep(impl, transport, method string, resp []byte, id int64) error {
	resp = bytes.TrimRight(resp, "\r\n ")
	if impl == servers.Floor {
		var want []byte
		switch {
		case transport == Stdio:
			want = AppendBody(nil, method, id)
		case method == Discover:
			want = servers.FloorDiscoverBody
		default:
			want = servers.FloorCallBody
		}
		if !bytes.Equal(resp, want) {
			return fmt.Errorf("floor answered %.200q, want %.200q", resp, want)
		}
		return nil
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  map[string]any  `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(resp, &m); err != nil {
		return fmt.Errorf("response is not JSON: %v: %.200q", err, resp)
	}
	if m.JSONRPC != "2.0" {
		return fmt.Errorf("jsonrpc is %q, want \"2.0\"", m.JSONRPC)
	}
	if string(m.ID) != strconv.FormatInt(id, 10) {
		return fmt.Errorf("id is %s, want %d", m.ID, id)
	}
	if m.Error != nil {
		return fmt.Errorf("error response: %s", m.Error)
	}
	r := m.Result
	if r == nil {
		return fmt.Errorf("no result: %.200q", resp)
	}
	if method != LegacyCall && r["resultType"] != "complete" {
		return fmt.Errorf("result.resultType is %v, want \"complete\"", r["resultType"])
	}
	if meta, ok := r["_meta"].(map[string]any); ok {
		// serverInfo is optional; when it is sent, it must be right.
		if si, ok := meta["io.modelcontextprotocol/serverInfo"]; ok {
			sm, _ := si.(map[string]any)
			if sm["name"] != servers.Name || sm["version"] != servers.Version {
				return fmt.Errorf("serverInfo is %v, want name %q version %q", si, servers.Name, servers.Version)
			}
		}
	}
	switch method {
	case Discover:
		vs, _ := r["supportedVersions"].([]any)
		if !slices.Contains(vs, any(ProtocolVersion)) {
			return fmt.Errorf("supportedVersions %v does not contain %s", r["supportedVersions"], ProtocolVersion)
		}
		caps, _ := r["capabilities"].(map[string]any)
		if _, ok := caps["tools"].(map[string]any); !ok {
			return fmt.Errorf("capabilities %v has no tools object", r["capabilities"])
		}
		if r["instructions"] != servers.Instructions {
			return fmt.Errorf("instructions are %v, want %q", r["instructions"], servers.Instructions)
		}
		if r["ttlMs"] != float64(servers.CacheTTL.Milliseconds()) {
			return fmt.Errorf("ttlMs is %v, want %d", r["ttlMs"], servers.CacheTTL.Milliseconds())
		}
		if r["cacheScope"] != servers.CacheScope {
			return fmt.Errorf("cacheScope is %v, want %q", r["cacheScope"], servers.CacheScope)
		}
	case Call, LegacyCall, CallBurn, CallSleep:
		if ie, ok := r["isError"]; ok && ie != false {
			return fmt.Errorf("isError is %v: %.300q", ie, resp)
		}
		c, _ := r["content"].([]any)
		if len(c) != 1 {
			return fmt.Errorf("content has %d items, want 1: %v", len(c), r["content"])
		}
		item, _ := c[0].(map[string]any)
		if item["type"] != "text" || item["text"] != CallText {
			return fmt.Errorf("content[0] is %v, want {type: text, text: %q}", c[0], CallText)
		}
	}
	return nil
}

// goldenID is the id of the request whose response becomes the golden
// response of a case.
const goldenID = 987654321

// Checker checks a case's responses. It is built from one deeply checked
// response and then compares each response byte for byte with it, the id
// spliced in; a response that differs gets the deep check, so a server may
// vary its bytes (key order, spacing) as long as every response is right.
// A Checker is safe for concurrent use.
type Checker struct {
	impl, transport, method string
	exact                   []byte // the HTTP floor: its fixed body
	prefix, suffix          []byte // around the id
}

// NewChecker deep-checks golden, the response to a request with id
// GoldenID, and returns a Checker for the case.
func NewChecker(impl, transport, method string, golden []byte) (*Checker, error) {
	if err := CheckDeep(impl, transport, method, golden, goldenID); err != nil {
		return nil, err
	}
	golden = bytes.TrimRight(golden, "\r\n ")
	c := &Checker{impl: impl, transport: transport, method: method}
	if impl == servers.Floor && transport == HTTP {
		c.exact = bytes.Clone(golden)
		return c, nil
	}
	needle := []byte(`"id":` + strconv.Itoa(goldenID))
	if i := bytes.Index(golden, needle); i >= 0 && bytes.Count(golden, needle) == 1 {
		c.prefix = bytes.Clone(golden[:i+len(`"id":`)])
		c.suffix = bytes.Clone(golden[i+len(needle):])
	}
	return c, nil
}

// Check checks resp, the response to request id.
func (c *Checker) Check(resp []byte, id int64) error {
	resp = bytes.TrimRight(resp, "\r\n ")
	if c.exact != nil {
		if bytes.Equal(resp, c.exact) {
			return nil
		}
	} else if c.prefix != nil && len(resp) > len(c.prefix)+len(c.suffix) &&
		bytes.HasPrefix(resp, c.prefix) && bytes.HasSuffix(resp, c.suffix) {
		if n, ok := parseInt(resp[len(c.prefix) : len(resp)-len(c.suffix)]); ok && n == id {
			return nil
		}
	}
	return CheckDeep(c.impl, c.transport, c.method, resp, id)
}

// ResponseID returns the id of a stdio response line, using the golden
// response's shape when it matches and a JSON decode otherwise.
func (c *Checker) ResponseID(resp []byte) (int64, bool) {
	resp = bytes.TrimRight(resp, "\r\n ")
	if c.prefix != nil && len(resp) > len(c.prefix)+len(c.suffix) &&
		bytes.HasPrefix(resp, c.prefix) && bytes.HasSuffix(resp, c.suffix) {
		if n, ok := parseInt(resp[len(c.prefix) : len(resp)-len(c.suffix)]); ok {
			return n, true
		}
	}
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(resp, &m) != nil {
		return 0, false
	}
	return parseInt(m.ID)
}

func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
