package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/mcpkit/mcpkit/mcp"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

var update = flag.Bool("update", false, "rewrite the expected output of wire tests")

// wireServer is the server every wire test talks to. Its options can be
// changed per test with lines "option NAME VALUE" in the archive comment.
func wireServer(t *testing.T, comment string) *mcp.Server {
	opts := &mcp.ServerOptions{Info: mcp.Implementation{Name: "wire", Version: "1.0.0"}}
	tasks := false
	for _, line := range strings.Split(comment, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "option" {
			continue
		}
		switch f[1] {
		case "resources":
			continue // legacyWireServer adds a resource
		case "maxbody":
			n, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			opts.MaxMessageBytes = n
		case "maxheader":
			n, err := strconv.Atoi(f[2])
			if err != nil {
				t.Fatal(err)
			}
			opts.HTTP.MaxHeaderBytes = n
		case "origin":
			opts.HTTP.AllowedOrigins = append(opts.HTTP.AllowedOrigins, f[2])
		case "instructions":
			opts.Instructions = f[2]
		case "auth":
			opts.Auth = testAuthOptions(f[2])
		case "modernonly":
			opts.Legacy.Disable = f[2] == "true"
		case "legacyonly":
			opts.Legacy.Only = f[2] == "true"
		case "idle":
			d, err := time.ParseDuration(f[2])
			if err != nil {
				t.Fatal(err)
			}
			opts.Legacy.SessionIdleTimeout = d
		case "tasks":
			tasks = true
		default:
			t.Fatalf("unknown option %q", f[1])
		}
	}
	s := mcp.NewServer(opts)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(ctx context.Context, req *mcp.ToolRequest, in echoIn) (string, error) { return in.Text, nil })
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress twice, then answers."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.Progress(1, 2, "half")
			req.Progress(2, 2, "done")
			return "finished", nil
		})
	s.AddRawTool(&mcp.Tool{
		Name:        "regional",
		Description: "Has parameters mirrored into headers.",
		InputSchema: []byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"count":{"type":"integer","x-mcp-header":"Count"}}}`),
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	if opts.Auth != nil {
		addScopedTools(s)
	}
	if tasks {
		addWireTaskTools(t, s)
	}
	return s
}

// addWireTaskTools registers the tools of the tasks wire tests ("option
// tasks on"), with task ids task-1, task-2, ... and a fixed clock.
func addWireTaskTools(t *testing.T, s *mcp.Server) {
	mcp.SetTaskClock(s, time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC))
	mcp.AddTool(s, &mcp.Tool{Name: "job", Description: "Answers at once; always a task.", TaskSupport: mcp.TaskRequired},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "job done", nil })
	mcp.AddTool(s, &mcp.Tool{Name: "broken_job", Description: "Fails with a protocol error; always a task.", TaskSupport: mcp.TaskRequired},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return "", &mcp.Error{Code: jsonrpc.CodeInternalError, Message: "broken"}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "wait", Description: "Runs until cancelled; a task when the client supports tasks.", TaskSupport: mcp.TaskOptional},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.StartTask()
			<-ctx.Done()
			return "", ctx.Err()
		})
	t.Cleanup(func() { s.Shutdown(context.Background()) })
}

// TestWireHTTP runs the archives in testdata/wire/http: each has a
// "request" file (METHOD PATH, header lines, a blank line, the body) and a
// "response" file (status, the headers that matter, a blank line, the body),
// and optionally "setup" files: requests in the same form sent first, in
// order, whose responses are not recorded.
// Run with -update to rewrite the responses.
func TestWireHTTP(t *testing.T) {
	forEachArchive(t, "../testdata/wire/http", "response", func(t *testing.T, ar *txtar.Archive) []byte {
		var reqText []byte
		var setup [][]byte
		for _, f := range ar.Files {
			switch f.Name {
			case "setup":
				setup = append(setup, f.Data)
			case "request":
				reqText = f.Data
			}
		}
		s := wireServer(t, string(ar.Comment))
		var h http.Handler = s
		if s.ProtectedResourceMetadataPath() != "" {
			h = s.NewHTTPServer("", "/mcp").Handler // with the metadata routes
		}
		for _, req := range setup { // earlier requests whose responses do not matter
			doWire(t, h, req)
		}
		return doWire(t, h, reqText)
	})
}

// forEachArchive runs one subtest per txtar archive in dir: run produces
// the output, which is compared with the archive's file named out, or
// written there with -update.
func forEachArchive(t *testing.T, dir, out string, run func(t *testing.T, ar *txtar.Archive) []byte) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if len(files) == 0 {
		t.Fatalf("no wire tests found in %s", dir)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got := run(t, ar)
			idx := slices.IndexFunc(ar.Files, func(f txtar.File) bool { return f.Name == out })
			if *update {
				if idx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: out})
					idx = len(ar.Files) - 1
				}
				ar.Files[idx].Data = got
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			var want []byte
			if idx >= 0 {
				want = ar.Files[idx].Data
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", out, diff)
			}
		})
	}
}

// shownHeaders are the response headers wire tests record.
var shownHeaders = []string{"Allow", "Content-Type", "X-Accel-Buffering", "Mcp-Session-Id", "Www-Authenticate"}

func doWire(t *testing.T, h http.Handler, reqText []byte) []byte {
	t.Helper()
	return doWireWait(t, h, reqText, 0)
}

// doWireWait is doWire with the request cancelled after wait (if not 0).
func doWireWait(t *testing.T, h http.Handler, reqText []byte, wait time.Duration) []byte {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(reqText))
	first, _ := br.ReadString('\n')
	method, target, _ := strings.Cut(strings.TrimSpace(first), " ")
	hdr := http.Header{}
	for {
		line, err := br.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line == "" || err != nil {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("bad header line %q", line)
		}
		hdr.Add(k, strings.TrimPrefix(v, " "))
	}
	var body bytes.Buffer
	body.ReadFrom(br)
	b := bytes.TrimSuffix(body.Bytes(), []byte("\n"))
	r := httptest.NewRequest(method, target, bytes.NewReader(b))
	r.Host = "127.0.0.1:8080"
	for k, vs := range hdr {
		if strings.EqualFold(k, "Host") {
			r.Host = vs[0]
			continue
		}
		r.Header[k] = vs
	}
	// Pretend the request arrived on a loopback listener, as a local server's would.
	ctx := context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080})
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	r = r.WithContext(ctx)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var out bytes.Buffer
	fmt.Fprintf(&out, "%d\n", w.Code)
	for _, k := range shownHeaders {
		if v := w.Header().Values(k); len(v) > 0 {
			fmt.Fprintf(&out, "%s: %s\n", k, strings.Join(v, ", "))
		}
	}
	out.WriteString("\n")
	out.Write(w.Body.Bytes())
	if w.Body.Len() > 0 && !bytes.HasSuffix(w.Body.Bytes(), []byte("\n")) {
		out.WriteString("\n")
	}
	return out.Bytes()
}

// TestWireStdio runs the archives in testdata/wire/stdio: "stdin" lines are
// fed to ServeStdio and the "stdout" lines it writes are compared. Requests
// run concurrently, so lines are compared in sorted order unless the
// archive comment says "ordered".
func TestWireStdio(t *testing.T) {
	forEachArchive(t, "../testdata/wire/stdio", "stdout", func(t *testing.T, ar *txtar.Archive) []byte {
		var in []byte
		for _, f := range ar.Files {
			if f.Name == "stdin" {
				in = f.Data
			}
		}
		s := wireServer(t, string(ar.Comment))
		var out bytes.Buffer
		if err := s.ServeStdio(context.Background(), bytes.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(ar.Comment), "ordered") {
			return out.Bytes()
		}
		return sortLines(out.Bytes())
	})
}

func sortLines(b []byte) []byte {
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	slices.Sort(lines)
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}
