package doccheck

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestClientAgent builds the agent program of docs/client.md and runs it
// against a server whose tool asks the user a question: the program must
// list the tools, answer the elicitation from stdin, print the result,
// acknowledge its listen stream, see a tool change and stop on SIGINT.
func TestClientAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program: not with -short")
	}
	root, blocks := allBlocks(t)
	var agent *Block
	for i, b := range blocks {
		if b.Directive == "program" && b.Arg == "agent" && b.File == "docs/client.md" {
			agent = &blocks[i]
		}
	}
	if agent == nil {
		t.Fatal("docs/client.md has no program agent")
	}
	m, err := NewModule(t.TempDir(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := m.Add(*agent)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "agent")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir, build.Env = dir, Env()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the agent: %v\n%s", err, m.Positions(string(out)))
	}

	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "shop"}})
	type Order struct {
		Item string `json:"item"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "order", Description: "Orders an item after asking how many."},
		func(ctx context.Context, req *mcp.ToolRequest, in Order) (string, error) {
			r, err := req.Elicit("count", &mcp.ElicitParams{
				Message:         "How many?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer","description":"items"}},"required":["count"]}`),
			})
			if err != nil {
				return "", err
			}
			var v struct{ Count int }
			if !r.Accepted() || r.Decode(&v) != nil {
				return "no order", nil
			}
			return "ordered " + strings.Repeat(in.Item+" ", v.Count), nil
		})
	hs := httptest.NewServer(s)
	defer hs.Close()
	defer s.Shutdown(context.Background())

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, hs.URL, "order", `{"item":"apple"}`)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "2\n")
	lines := bufio.NewScanner(stdout)
	expect := func(want string) {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("the agent ended before printing %q; stderr:\n%s", want, stderr.String())
		}
		if got := lines.Text(); got != want {
			t.Fatalf("the agent printed %q, want %q; stderr:\n%s", got, want, stderr.String())
		}
	}
	expect("connected to shop (modern era, 2026-07-28)")
	expect("tool order: Orders an item after asking how many.")
	expect("result: ordered apple apple ")
	expect("listening")
	mcp.AddTool(s, &mcp.Tool{Name: "cancel", Description: "Cancels."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return "", nil
	})
	expect("the tools changed; they are now:")
	expect("  cancel")
	expect("  order")
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("the agent exited with %v on SIGINT; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "How many?") {
		t.Errorf("the agent did not show the question; stderr:\n%s", stderr.String())
	}
}
