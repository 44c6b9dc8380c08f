package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/protocol"
)

func fuzzServer() *Server {
	// Listen off: a valid subscriptions/listen would hold ServeHTTP for as
	// long as its stream is open (FuzzListenParams covers listen).
	s := NewServer(&ServerOptions{Info: Implementation{Name: "fuzz", Version: "1"}, Listen: ListenOptions{Disable: true}})
	type in struct {
		Text string `json:"text"`
	}
	AddTool(s, &Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *ToolRequest, in in) (string, error) {
		req.Progress(1, 0, "x")
		req.Log(LevelInfo, "", in.Text)
		return in.Text, nil
	})
	s.AddRawTool(&Tool{Name: "hdr", Description: "Header params.", InputSchema: `{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"},"n":{"type":"integer","x-mcp-header":"N"}}}`},
		func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) { return nil, nil })
	return s
}

// FuzzServeHTTP sends arbitrary bodies and header values through the whole
// HTTP path: it must never panic, and every response must be one JSON-RPC
// message (or an SSE stream of them) with a status from the error table.
func FuzzServeHTTP(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":1,"io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), "tools/call", "echo", "x")
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hdr","arguments":{"r":"a","n":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), "tools/call", "hdr", "=?base64?YQ==?=")
	f.Add([]byte(`{"jsonrpc":"2.0","id":"q","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"x","io.modelcontextprotocol/clientCapabilities":{}}}}`), "server/discover", "", "")
	s := fuzzServer()
	f.Fuzz(func(t *testing.T, body []byte, method, name, param string) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		if headerSafe(method) && headerSafe(name) && headerSafe(param) {
			r.Header.Set("Mcp-Method", method)
			r.Header.Set("Mcp-Name", name)
			r.Header.Set("Mcp-Param-R", param)
			r.Header.Set("Mcp-Param-N", param)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		switch w.Code {
		case 200, 202, 400, 404, 413, 500:
		default:
			t.Fatalf("unexpected status %d", w.Code)
		}
		if w.Code == 202 {
			if w.Body.Len() != 0 {
				t.Fatal("202 with a body")
			}
			return
		}
		out := w.Body.Bytes()
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && !json.Valid([]byte(d)) {
					t.Fatalf("SSE data is not JSON: %s", d)
				}
			}
			return
		}
		if !json.Valid(out) || bytes.Contains(out, []byte("\n")) {
			t.Fatalf("response is not single-line JSON: %q", out)
		}
	})
}

// FuzzStdioFraming feeds arbitrary bytes to ServeStdio: it must end, never
// panic, and write only whole lines of valid JSON.
func FuzzStdioFraming(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{}}\n\n{bad\r\n"))
	f.Add([]byte("\n\n\n"))
	s := NewServer(&ServerOptions{MaxMessageBytes: 256})
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if err := s.ServeStdio(context.Background(), bytes.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		if out.Len() == 0 {
			return
		}
		if !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
			t.Fatalf("output does not end with a newline: %q", out.Bytes())
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
			if !json.Valid(line) {
				t.Fatalf("output line is not JSON: %q", line)
			}
		}
	})
}

// FuzzHeaderValue checks the Base64 sentinel decoder: values without the
// exact sentinel come back unchanged, and decoded values round-trip.
func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"us-west1", "=?base64?SGVsbG8=?=", "=?base64?SGVsbG8?=", "=?base64?SGVsbG8=", "=?base64??=", "=?BASE64?SGk=?="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, err := decodeHeaderValue(v)
		inner, isSentinel := strings.CutPrefix(v, "=?base64?")
		if isSentinel {
			inner, isSentinel = strings.CutSuffix(inner, "?=")
		}
		if !isSentinel {
			if err != nil || got != v {
				t.Fatalf("plain value %q changed to %q, %v", v, got, err)
			}
			return
		}
		if err != nil {
			return
		}
		if enc := b64std(got); enc != inner {
			t.Fatalf("decoded %q re-encodes to %q, not %q", got, enc, inner)
		}
	})
}

// FuzzScanMeta checks that _meta scanning never panics and agrees with
// encoding/json about the reserved members it finds.
func FuzzScanMeta(f *testing.F) {
	f.Add([]byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}`))
	f.Add([]byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"a","io.modelcontextprotocol/protocolVersion":"b"}}`))
	f.Add([]byte(`{"name":"a","_meta":5,"n\u0061me":"b","arguments":{"_meta":{}},"_meta":{"progressToken":1},"uri":"u","taskId":"t","inputResponses":{},"requestState":"s"}`))
	f.Add([]byte(`{"_meta":{"io.modelcontextprotocol/logLevel":"x"},"\u005fmeta":[]}`))
	f.Add([]byte(`{"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","baggage":"k=v","io.modelcontextprotocol/x":1},"name":"a"}`))
	f.Add([]byte(`{"_meta":{"trace\u0070arent":"x"},"_meta":{"progressToken":1}}`))
	f.Fuzz(func(t *testing.T, params []byte) {
		checkMetaVisitor(t, params)
		if !json.Valid(params) {
			return
		}
		var ref struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		refErr := json.Unmarshal(params, &ref)
		rm, err := scanMeta(params)
		if err != nil || refErr != nil || !rm.p.present {
			return
		}
		var want string
		if v, ok := ref.Meta[protocol.MetaProtocolVersion]; ok && json.Unmarshal(v, &want) == nil {
			var got string
			if json.Unmarshal(rm.version, &got) != nil || got != want {
				t.Fatalf("protocolVersion: scanMeta found %q, encoding/json %q", rm.version, want)
			}
		}
		var info RequestInfo
		_ = rm.decodeInfo(&info, "v") // must not panic; errors are fine
		// RequestInfo.Meta: only members that are not the protocol's,
		// each a valid JSON value, and none when extraMeta found none.
		raw := rm.extraMeta(params)
		meta := decodeMeta(raw)
		if raw == nil && meta != nil {
			t.Fatalf("params %s: Meta %v without an extra _meta span", params, meta)
		}
		for k, v := range meta {
			if isProtocolMetaKey([]byte(k)) || !json.Valid(v) {
				t.Fatalf("params %s: Meta member %q = %s", params, k, v)
			}
		}
	})
}

func b64std(s string) string {
	return base64.StdEncoding.EncodeToString([]byte(s))
}

// checkMetaVisitor checks that reading _meta while decoding a request with
// these params (metaVisitor) finds exactly what scanMeta finds.
func checkMetaVisitor(t *testing.T, params []byte) {
	t.Helper()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + string(params) + `}`)
	var mv metaVisitor
	msg, derr := decodeVisit(body, mv.visit)
	if derr != nil {
		return
	}
	mv.finish(msg.Params)
	rm, err := scanMeta(msg.Params)
	if (err == nil) != (mv.err == nil) || (err != nil && err.Message != mv.err.Message) {
		t.Fatalf("params %s: visitor error %v, scanMeta %v", params, mv.err, err)
	}
	same := func(a, b []byte) bool {
		return len(a) == len(b) && (a == nil) == (b == nil) && (len(a) == 0 || &a[0] == &b[0])
	}
	got, want := mv.rm, rm
	if got.p.present != want.p.present || !same(got.extraMeta(msg.Params), want.extraMeta(msg.Params)) || !same(got.version, want.version) || !same(got.caps, want.caps) ||
		!same(got.clientInfo, want.clientInfo) || !same(got.logLevel, want.logLevel) || !same(got.progressToken, want.progressToken) {
		t.Fatalf("params %s: visitor found _meta %+v, scanMeta %+v", params, got, want)
	}
	if !same(got.p.src, want.p.src) || got.p.packed != want.p.packed {
		t.Fatalf("params %s: visitor spans %+v, scanMeta %+v", params, got.p, want.p)
	}
	for _, key := range []string{"name", "uri", "taskId", "arguments", "inputResponses", "requestState", "_meta"} {
		gv, gok := got.p.lookup(msg.Params, key)
		wv, wok := want.p.lookup(msg.Params, key)
		lv, lok := jsonscan.Lookup(msg.Params, key)
		if gok != wok || gok != lok || !same(gv, wv) || !same(gv, lv) {
			t.Fatalf("params %s: member %s: visitor %q, scanMeta %q, Lookup %q", params, key, gv, wv, lv)
		}
	}
}
