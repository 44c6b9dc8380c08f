package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Statuses of a check.
const (
	statusPass = "pass"
	statusFail = "fail"
	statusSkip = "skip"
)

// checkResult is one line of --check.
type checkResult struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Section string `json:"section"`
	Status  string `json:"status"`
	Detail  string `json:"detail,omitempty"`
}

// bogusVersion is a well-formed protocol version that no server supports.
// It is later than every real revision, so that a dual-era server cannot
// take it for a legacy version (go-sdk v1.8.0 answers a legacy-looking
// header such as 1900-01-01 with a plain-text 400, as the legacy revisions
// allowed).
const bogusVersion = "9999-12-31"

// checker runs the checks of one server.
type checker struct {
	ctx     context.Context
	s       *client.Session
	conn    client.Conn // where the checks are sent
	http    bool
	version string // the modern version the checks speak
	results []checkResult

	unsupported *client.Reply // the reply to the bogus version
	discovered  *client.Reply // the reply at the supported version
	noModern    bool          // data.supported names no modern version
}

// unsupportedSupported returns data.supported of the -32022, or nil.
func (c *checker) unsupportedSupported() []string {
	e := c.unsupported.RPCError()
	if e == nil || e.Code != protocol.CodeUnsupportedVersion {
		return nil
	}
	var d struct {
		Supported []string `json:"supported"`
	}
	json.Unmarshal(e.Data, &d)
	return d.Supported
}

func newestModern(versions []string) string {
	for _, v := range protocol.ModernVersions {
		if slices.Contains(versions, v) {
			return v
		}
	}
	return ""
}

// needsModern skips a check that needs a modern version the server
// supports, when it supports none; it reports whether it skipped.
func (c *checker) needsModern(id, title, section string) bool {
	if c.noModern {
		c.skip(id, title, section, fmt.Sprintf("the server supports no modern version (data.supported: [%s])", client.ListSummary(c.unsupportedSupported(), " ")))
	}
	return c.noModern
}

// runChecks checks the server's discovery and request validation. fresh,
// when not nil, is an HTTP connection without the probe's session to
// send the checks on.
func runChecks(ctx context.Context, s *client.Session, fresh client.Conn, f *discoverFlags) []checkResult {
	c := &checker{ctx: ctx, s: s, conn: s.Conn()}
	if fresh != nil {
		c.conn = fresh
	}
	_, c.http = c.conn.(*client.HTTPConn)
	c.version = s.Version()
	if s.Era() != protocol.EraModern {
		c.version = protocol.ModernVersions[0]
		if f.version != "" {
			c.version = f.version
		}
	}
	c.unsupportedVersion()
	if c.s.Era() != protocol.EraModern {
		// Speak the newest modern version the server lists, if any.
		if v := newestModern(c.unsupportedSupported()); v != "" {
			c.version = v
		} else if c.unsupportedSupported() != nil {
			c.noModern = true
		}
	}
	c.supportedVersion()
	c.versionsAgree()
	c.missingMeta()
	if c.http {
		c.headerMismatch()
	}
	c.unknownMethod()
	if c.http {
		c.getNotAllowed()
	}
	c.discoverFirst()
	return c.results
}

func (c *checker) add(id, title, section string, failures []string) {
	r := checkResult{ID: id, Title: title, Section: section, Status: statusPass}
	if len(failures) > 0 {
		r.Status = statusFail
		r.Detail = strings.Join(failures, "; ")
	}
	c.results = append(c.results, r)
}

func (c *checker) skip(id, title, section, why string) {
	c.results = append(c.results, checkResult{ID: id, Title: title, Section: section, Status: statusSkip, Detail: why})
}

// send sends a modern request at version for method, after alter (if not
// nil) changed it.
func (c *checker) send(version, method string, alter func(*client.Request)) (*client.Reply, error) {
	ms := client.NewModernSession(c.conn, version, encodedClientInfo())
	req, err := ms.Request(method, nil)
	if err != nil {
		return nil, err
	}
	if alter != nil {
		alter(req)
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.s.Timeout())
	defer cancel()
	return c.conn.RoundTrip(ctx, req)
}

// expectError returns what is wrong with reply r, which should carry
// JSON-RPC error code and, on HTTP, the given status.
func (c *checker) expectError(r *client.Reply, err error, code, status int) []string {
	if err != nil {
		return []string{err.Error()}
	}
	var bad []string
	e := r.RPCError()
	switch {
	case e == nil:
		bad = append(bad, fmt.Sprintf("want error %d, got %s", code, r.Describe()))
	case e.Code != code:
		bad = append(bad, fmt.Sprintf("want error %d, got %d %q", code, e.Code, e.Message))
	}
	if c.http && status != 0 && r.Status != status {
		bad = append(bad, fmt.Sprintf("want HTTP %d, got %d", status, r.Status))
	}
	return bad
}

// discoverFirst: server/discover, as the first request on the connection
// (the probe), was answered: with a DiscoverResult or with a modern error
// that lists the supported versions.
func (c *checker) discoverFirst() {
	const (
		id      = "discover-first"
		title   = "server/discover answered without any prior request"
		section = "server/discover#when-to-call"
	)
	first := c.s.FirstReply
	var bad []string
	switch {
	case first == nil:
		bad = append(bad, "the probe got no answer")
	case first.Result() != nil:
		if _, err := client.ParseDiscoverResult(first.Result()); err != nil {
			bad = append(bad, "the answer is not a DiscoverResult: "+err.Error())
		}
	case first.RPCError() != nil && first.RPCError().Code == protocol.CodeUnsupportedVersion:
	default:
		bad = append(bad, "server/discover got "+first.Describe())
	}
	c.add(id, title, section, bad)
}

// unsupportedVersion: a bogus version gets -32022 (HTTP 400) with a
// usable data.supported and data.requested.
func (c *checker) unsupportedVersion() {
	r, err := c.send(bogusVersion, "server/discover", nil)
	c.unsupported = r
	title := "unsupported version " + bogusVersion + " -> -32022"
	if c.http {
		title += " (HTTP 400)"
	}
	c.add("unsupported-version", title, "basic/versioning#protocol-version-negotiation",
		c.expectError(r, err, protocol.CodeUnsupportedVersion, http.StatusBadRequest))

	const (
		id      = "unsupported-version-data"
		dtitle  = "-32022 data: supported lists versions, requested echoes the request"
		section = "schema#unsupportedprotocolversionerror"
	)
	e := r.RPCError()
	if e == nil || e.Code != protocol.CodeUnsupportedVersion {
		c.skip(id, dtitle, section, "no -32022 to inspect")
		return
	}
	c.add(id, dtitle, section, checkUnsupportedData(e))
}

func checkUnsupportedData(e *jsonrpc.Error) []string {
	var data struct {
		Supported json.RawMessage `json:"supported"`
		Requested json.RawMessage `json:"requested"`
	}
	if len(e.Data) == 0 {
		return []string{"the error has no data"}
	}
	if err := json.Unmarshal(e.Data, &data); err != nil {
		return []string{"data is not an object"}
	}
	var bad []string
	var supported []string
	if err := json.Unmarshal(data.Supported, &supported); err != nil || len(supported) == 0 {
		bad = append(bad, fmt.Sprintf("data.supported is not a non-empty array of strings: %s", orMissing(data.Supported)))
	}
	var requested string
	if err := json.Unmarshal(data.Requested, &requested); err != nil || requested != bogusVersion {
		bad = append(bad, fmt.Sprintf("data.requested is %s, want %q", orMissing(data.Requested), bogusVersion))
	}
	return bad
}

func orMissing(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "missing"
	}
	if len(raw) > 200 {
		return fmt.Sprintf("%s... (%d bytes)", raw[:200], len(raw))
	}
	return string(raw)
}

// supportedVersion: server/discover at a supported version returns a
// DiscoverResult with supportedVersions, capabilities, serverInfo and the
// cache hints.
func (c *checker) supportedVersion() {
	const section = "server/discover#discoverresult"
	if c.noModern {
		c.add("discover-result", "server/discover at a supported version -> supportedVersions and capabilities", section,
			[]string{fmt.Sprintf("the server supports no modern version (data.supported: [%s]), so it does not serve server/discover", client.ListSummary(c.unsupportedSupported(), " "))})
		c.skip("discover-server-info", "serverInfo in _meta", section, "no DiscoverResult")
		c.skip("discover-cache", "ttlMs >= 0 and cacheScope", "server/utilities/caching", "no DiscoverResult")
		return
	}
	r, err := c.send(c.version, "server/discover", nil)
	c.discovered = r
	if err != nil {
		c.add("discover-result", "server/discover at "+c.version+" -> DiscoverResult", section, []string{err.Error()})
		c.skip("discover-server-info", "serverInfo in _meta", section, "no DiscoverResult")
		c.skip("discover-cache", "ttlMs >= 0 and cacheScope", "server/utilities/caching", "no DiscoverResult")
		return
	}
	var bad []string
	var raw map[string]json.RawMessage
	res := r.Result()
	if res == nil || json.Unmarshal(res, &raw) != nil {
		bad = append(bad, "got "+r.Describe())
		if e := r.RPCError(); e != nil && e.Code == protocol.CodeUnsupportedVersion {
			bad = append(bad, "the server supports "+orMissing(e.Data))
		}
	} else {
		var versions []string
		if err := json.Unmarshal(raw["supportedVersions"], &versions); err != nil || len(versions) == 0 {
			bad = append(bad, "supportedVersions is not a non-empty array of strings: "+orMissing(raw["supportedVersions"]))
		} else if !slices.Contains(versions, c.version) {
			bad = append(bad, fmt.Sprintf("supportedVersions [%s] leaves out %s, the version of the request it answered", client.ListSummary(versions, " "), c.version))
		}
		if v, ok := raw["capabilities"]; !ok || len(v) == 0 || v[0] != '{' {
			bad = append(bad, "capabilities is not an object: "+orMissing(raw["capabilities"]))
		}
	}
	c.add("discover-result", "server/discover at "+c.version+" -> supportedVersions and capabilities", section, bad)
	if res == nil {
		c.skip("discover-server-info", "serverInfo in _meta", section, "no DiscoverResult")
		c.skip("discover-cache", "ttlMs >= 0 and cacheScope", "server/utilities/caching", "no DiscoverResult")
		return
	}

	var meta struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(res, &meta)
	var info mcp.Implementation
	bad = nil
	if si, ok := meta.Meta[protocol.MetaServerInfo]; !ok {
		bad = append(bad, "no _meta[\""+protocol.MetaServerInfo+"\"]")
	} else if json.Unmarshal(si, &info) != nil || info.Name == "" || info.Version == "" {
		bad = append(bad, "serverInfo needs a name and a version, got "+string(si))
	}
	c.add("discover-server-info", "serverInfo (name, version) in _meta", section, bad)

	bad = nil
	var ttl json.Number
	if v, ok := raw["ttlMs"]; !ok {
		bad = append(bad, "no ttlMs")
	} else if err := json.Unmarshal(v, &ttl); err != nil {
		bad = append(bad, "ttlMs is not a number: "+string(v))
	} else if n, err := ttl.Int64(); err != nil || n < 0 {
		bad = append(bad, "ttlMs is not an integer >= 0: "+string(v))
	}
	var scope string
	if v, ok := raw["cacheScope"]; !ok {
		bad = append(bad, "no cacheScope")
	} else if json.Unmarshal(v, &scope) != nil || (scope != "public" && scope != "private") {
		bad = append(bad, "cacheScope is not \"public\" or \"private\": "+string(v))
	}
	c.add("discover-cache", "ttlMs >= 0 and cacheScope public|private", "server/utilities/caching", bad)
}

// versionsAgree: the DiscoverResult's supportedVersions and the -32022's
// data.supported name the same versions.
func (c *checker) versionsAgree() {
	const (
		id      = "versions-agree"
		title   = "supportedVersions agrees with -32022 data.supported"
		section = "basic/versioning#protocol-version-negotiation"
	)
	var a struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	var b struct {
		Supported []string `json:"supported"`
	}
	e := c.unsupported.RPCError()
	if c.discovered.Result() == nil || json.Unmarshal(c.discovered.Result(), &a) != nil || a.SupportedVersions == nil {
		c.skip(id, title, section, "no supportedVersions to compare")
		return
	}
	if e == nil || e.Code != protocol.CodeUnsupportedVersion || json.Unmarshal(e.Data, &b) != nil || b.Supported == nil {
		c.skip(id, title, section, "no data.supported to compare")
		return
	}
	x, y := slices.Clone(a.SupportedVersions), slices.Clone(b.Supported)
	slices.Sort(x)
	slices.Sort(y)
	var bad []string
	if !slices.Equal(slices.Compact(x), slices.Compact(y)) {
		bad = append(bad, fmt.Sprintf("supportedVersions [%s], data.supported [%s]", client.ListSummary(a.SupportedVersions, " "), client.ListSummary(b.Supported, " ")))
	}
	c.add(id, title, section, bad)
}

// missingMeta: a request without _meta gets -32602 (HTTP 400).
func (c *checker) missingMeta() {
	r, err := c.send(c.version, "server/discover", func(req *client.Request) { req.Params = json.RawMessage(`{}`) })
	title := "missing _meta -> -32602"
	if c.http {
		title += " (HTTP 400)"
	}
	c.add("missing-meta", title, "basic/index#meta", c.expectError(r, err, jsonrpc.CodeInvalidParams, http.StatusBadRequest))
}

// headerMismatch: headers that disagree with the body get -32020 (400).
func (c *checker) headerMismatch() {
	if c.needsModern("header-mismatch-method", "Mcp-Method header != body method -> -32020 (HTTP 400)", "basic/transports/streamable-http#server-validation") {
		c.needsModern("header-mismatch-version", "MCP-Protocol-Version header != _meta version -> -32020 (HTTP 400)", "basic/transports/streamable-http#protocol-version-header")
		return
	}
	r, err := c.send(c.version, "server/discover", func(req *client.Request) { req.Header.Set(protocol.HeaderMethod, "tools/list") })
	c.add("header-mismatch-method", "Mcp-Method header != body method -> -32020 (HTTP 400)",
		"basic/transports/streamable-http#server-validation", c.expectError(r, err, protocol.CodeHeaderMismatch, http.StatusBadRequest))
	r, err = c.send(c.version, "server/discover", func(req *client.Request) { req.Header.Set(protocol.HeaderProtocolVersion, bogusVersion) })
	c.add("header-mismatch-version", "MCP-Protocol-Version header != _meta version -> -32020 (HTTP 400)",
		"basic/transports/streamable-http#protocol-version-header", c.expectError(r, err, protocol.CodeHeaderMismatch, http.StatusBadRequest))
}

// unknownMethod: a method the server does not know gets -32601 (404).
func (c *checker) unknownMethod() {
	title := "unknown method -> -32601"
	section := "basic/index#error-codes"
	if c.http {
		title += " (HTTP 404)"
		section = "basic/transports/streamable-http#protocol-version-header"
	}
	if c.needsModern("unknown-method", title, section) {
		return
	}
	r, err := c.send(c.version, "mcpkit/no-such-method", nil)
	c.add("unknown-method", title, section, c.expectError(r, err, jsonrpc.CodeMethodNotFound, http.StatusNotFound))
}

// getNotAllowed: GET on the endpoint gets 405.
func (c *checker) getNotAllowed() {
	hc := c.conn.(*client.HTTPConn)
	ctx, cancel := context.WithTimeout(c.ctx, c.s.Timeout())
	defer cancel()
	r, err := hc.Do(ctx, http.MethodGet, nil)
	var bad []string
	switch {
	case err != nil:
		bad = append(bad, err.Error())
	case r.Status != http.StatusMethodNotAllowed:
		bad = append(bad, fmt.Sprintf("want HTTP 405, got %d", r.Status))
	}
	c.add("get-405", "GET on the endpoint -> HTTP 405", "basic/transports/streamable-http#earlier-streamable-http-revisions", bad)
}
