package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/mcpkit/mcpkit/mcp"
)

// legacyWireServer is wireServer plus tools that exercise the legacy era.
func legacyWireServer(t *testing.T, comment string) *mcp.Server {
	s := wireServer(t, comment)
	mcp.AddTool(s, &mcp.Tool{Name: "logs", Description: "Logs once at info and once at debug."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.Log(mcp.LevelInfo, "wire", "info line")
			req.Log(mcp.LevelDebug, "wire", "debug line")
			return "logged", nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "poll", Description: "Asks the client to poll, then answers."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.Legacy().CloseSSEStream()
			return "polled", nil
		})
	if strings.Contains(comment, "option resources") {
		s.AddResource(&mcp.Resource{URI: "test://note", Name: "note", MIMEType: "text/plain"},
			func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "a note"}}}, nil
			})
	}
	return s
}

var sessionHeader = regexp.MustCompile(`(?m)^Mcp-Session-Id: (\S+)$`)

// TestWireLegacyHTTP runs the archives in testdata/wire/legacy: each is the
// life of one server as a sequence of exchanges, files "N.request" and
// "N.response" in the format of TestWireHTTP. In requests, "$SESSION"
// stands for the session id minted by the latest initialize; in responses
// the minted id is shown as "$SESSION". A request header "Test-Wait: D"
// (removed before sending) cancels the request after D, for GET streams
// that would not end by themselves. A file "N.sleep" holds a duration to
// wait between exchanges. Run with -update to rewrite the responses.
//
// Each archive runs in a synctest bubble (the exchanges go through
// ServeHTTP in process): "N.sleep", Test-Wait and the server's idle
// timeouts are the bubble's time, so a sleep past a session's expiry takes
// no wall-clock time and cannot race a loaded machine.
func TestWireLegacyHTTP(t *testing.T) {
	files, _ := filepath.Glob("../testdata/wire/legacy/*.txtar")
	if len(files) == 0 {
		t.Fatal("no wire tests found")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ar, err := txtar.ParseFile(file)
				if err != nil {
					t.Fatal(err)
				}
				s := legacyWireServer(t, string(ar.Comment))
				// Shutdown ends the goroutines the server keeps idle (legacy
				// workers wait for the next request), which must end inside
				// the bubble.
				t.Cleanup(func() { s.Shutdown(context.Background()) })
				session := "none"
				var out []txtar.File
				for i := 0; i < len(ar.Files); i++ {
					f := ar.Files[i]
					switch {
					case strings.HasSuffix(f.Name, ".sleep"):
						d, err := time.ParseDuration(strings.TrimSpace(string(f.Data)))
						if err != nil {
							t.Fatal(err)
						}
						time.Sleep(d)
						out = append(out, f)
					case strings.HasSuffix(f.Name, ".request"):
						step := strings.TrimSuffix(f.Name, ".request")
						req := strings.ReplaceAll(string(f.Data), "$SESSION", session)
						var wait time.Duration
						if m := regexp.MustCompile(`(?m)^Test-Wait: (\S+)\n`).FindStringSubmatch(req); m != nil {
							wait, _ = time.ParseDuration(m[1])
							req = strings.Replace(req, m[0], "", 1)
						}
						got := string(doWireWait(t, s, []byte(req), wait))
						if m := sessionHeader.FindStringSubmatch(got); m != nil {
							session = m[1]
						}
						if session != "none" {
							got = strings.ReplaceAll(got, session, "$SESSION")
						}
						out = append(out, f)
						want := ""
						if i+1 < len(ar.Files) && ar.Files[i+1].Name == step+".response" {
							want = string(ar.Files[i+1].Data)
							i++
						}
						out = append(out, txtar.File{Name: step + ".response", Data: []byte(got)})
						if !*update {
							if diff := cmp.Diff(want, got); diff != "" {
								t.Errorf("step %s: response mismatch (-want +got):\n%s", step, diff)
							}
						}
					default:
						t.Fatalf("unexpected file %q", f.Name)
					}
				}
				if *update {
					ar.Files = out
					if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			})
		})
	}
}
