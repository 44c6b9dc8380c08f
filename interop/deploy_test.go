package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/client/auth"
	"github.com/mcpkit/mcpkit/internal/doccheck"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

// upstreams records, for each request a client sends through nginx, the
// replica that answered it (nginx's X-Upstream header).
type upstreams struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []hop
}

// hop is one request through nginx: its method and name headers, and the
// replica that answered.
type hop struct{ method, name, upstream string }

func (u *upstreams) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := u.next.RoundTrip(r)
	if err == nil {
		u.mu.Lock()
		u.seen = append(u.seen, hop{r.Header.Get("Mcp-Method"), r.Header.Get("Mcp-Name"), resp.Header.Get("X-Upstream")})
		u.mu.Unlock()
	}
	return resp, err
}

// take returns the hops since the last take.
func (u *upstreams) take() []hop {
	u.mu.Lock()
	defer u.mu.Unlock()
	h := u.seen
	u.seen = nil
	return h
}

// freePorts returns n distinct free ports on 127.0.0.1.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// waitUntil polls cond until it holds, for at most d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", d, what)
		}
	}
}

// TestGatewayDeployment runs the deployment of docs/gateway.md ("A tested
// deployment") as the page shows it: its configuration, its nginx.conf
// and its commands (two `mcpkit gateway` replicas of the full build over
// one redis-server, an oauthtest authorization server in front, nginx as
// the load balancer, hashing on the caller's token), with free ports for
// the page's. Then, through nginx only: a request without a token is
// refused with the resource metadata named; clients with the
// client-credentials grant list and call both servers, each caller on one
// replica and both replicas serving; an input_required round completes;
// a listener on one replica hears a list change made on the other,
// through Redis; and with one replica killed its callers go on through
// the other.
func TestGatewayDeployment(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server, nginx and two gateways")
	}
	for _, prog := range []string{"redis-server", "nginx", "bash"} {
		if _, err := exec.LookPath(prog); err != nil {
			if _, serr := os.Stat("/usr/sbin/" + prog); serr != nil {
				t.Skipf("%s is not installed (scripts/test.sh installs redis-server and nginx): %v", prog, err)
			}
		}
	}
	page, err := os.ReadFile("../docs/gateway.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := doccheck.Parse("docs/gateway.md", string(page))
	if err != nil {
		t.Fatal(err)
	}
	block := func(name string) string {
		b, err := doccheck.Named(blocks, "script", name)
		if err != nil {
			t.Fatal(err)
		}
		return b.Text
	}
	as := oauthtest.NewServer(t, nil)
	ports := freePorts(t, 4) // redis, nginx, replica 1, replica 2
	redisPort, nginxPort, port1, port2 := ports[0], ports[1], ports[2], ports[3]
	local := strings.NewReplacer("6379", redisPort, "8080", nginxPort, "8081", port1, "8082", port2, "http://127.0.0.1:9000", as.URL)

	// The full build of mcpkit (it has --redis), first on PATH.
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "mcpkit"), "./cmd/mcpkit")
	build.Dir = "../full"
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the full mcpkit: %v\n%s", err, out)
	}
	if p, err := exec.LookPath("nginx"); err != nil || p == "" {
		bin += string(os.PathListSeparator) + "/usr/sbin"
	}

	dir := t.TempDir()
	os.Chmod(dir, 0o755) // nginx's workers may run as another user
	for name, text := range map[string]string{
		"gateway.yaml": block("gateway-deployment-config"),
		"nginx.conf":   block("gateway-deployment-nginx"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(local.Replace(text)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The page's commands, then wait: bash stays the parent of what they
	// started, all in one process group, which the test ends.
	script := local.Replace(block("gateway-deployment")) + "wait\n"
	sh := exec.Command("bash", "-c", script)
	sh.Dir = dir
	sh.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var logs lockedBuffer
	pr, pw := io.Pipe()
	sh.Stdout, sh.Stderr = pw, pw
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := pr.Read(buf)
			if n > 0 {
				logs.WriteLine(strings.TrimRight(string(buf[:n]), "\n"))
			}
			if err != nil {
				return
			}
		}
	}()
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { sh.Wait(); pw.Close(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-sh.Process.Pid, syscall.SIGTERM) // the gateways drain, nginx and redis stop
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			syscall.Kill(-sh.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			errlog, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("the deployment's output:\n%s\nnginx's error.log:\n%s", logs.String(), errlog)
		}
	})

	public := "http://127.0.0.1:" + nginxPort + "/mcp"
	for _, p := range []string{port1, port2} {
		waitUntil(t, 60*time.Second, "replica "+p+" to be ready", func() bool {
			select {
			case <-exited:
				t.Fatalf("the deployment's commands ended:\n%s", logs.String())
			default:
			}
			resp, err := http.Get("http://127.0.0.1:" + p + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		})
	}
	waitUntil(t, 30*time.Second, "nginx to answer", func() bool {
		resp, err := http.Get(public)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.Header.Get("X-Upstream") != ""
	})

	t.Run("no token", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		req, _ := http.NewRequest("POST", public, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		challenge := resp.Header.Get("WWW-Authenticate")
		metadata := "http://127.0.0.1:" + nginxPort + "/.well-known/oauth-protected-resource/mcp"
		if resp.StatusCode != 401 || !strings.Contains(challenge, `resource_metadata="`+metadata+`"`) {
			t.Fatalf("without a token: %d, WWW-Authenticate %q; want 401 naming %s", resp.StatusCode, challenge, metadata)
		}
		resp, err = http.Get(metadata)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var prm struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&prm); err != nil || resp.StatusCode != 200 {
			t.Fatalf("the resource metadata through nginx: %d, %v", resp.StatusCode, err)
		}
		if prm.Resource != public || !slices.Equal(prm.AuthorizationServers, []string{as.URL}) {
			t.Errorf("resource metadata %+v, want resource %s and the authorization server %s", prm, public, as.URL)
		}
	})

	ctx := context.Background()
	// signIn connects a client with the client-credentials grant, which
	// finds the authorization server through nginx; each client gets its
	// own token, so nginx's hash may put it on either replica.
	outer := t
	signIn := func(t *testing.T) (*client.Client, *upstreams) {
		t.Helper()
		tr, err := auth.NewTransport(public, &auth.Options{Grant: auth.ClientCredentialsGrant{}, Client: &auth.Client{ID: as.ClientID, Secret: as.ClientSecret}})
		if err != nil {
			t.Fatal(err)
		}
		rec := &upstreams{next: tr}
		hc := tr.Client()
		hc.Transport = rec
		c, err := client.Connect(ctx, &client.HTTPTransport{URL: public, HTTPClient: hc}, &client.Options{Eras: client.ModernOnly, NoCache: true,
			Elicit: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "deployer", "email": "d@example.com"}}, nil
			}})
		if err != nil {
			t.Fatalf("connecting through nginx with a token: %v", err)
		}
		outer.Cleanup(func() { c.Close() }) // the clients outlive the subtest that signs one in
		return c, rec
	}
	// replicaOf calls modern_echo and returns the replica that answered.
	replicaOf := func(t *testing.T, c *client.Client, rec *upstreams) string {
		t.Helper()
		rec.take()
		res, err := c.CallTool(ctx, "modern_echo", map[string]any{"text": "where"})
		if err != nil || textOf(res.Content) != "where" {
			t.Fatalf("modern_echo: %v", err)
		}
		h := rec.take()
		return h[len(h)-1].upstream
	}
	c, rec := signIn(t)
	var other *client.Client // a client on the other replica than c's
	var otherRec *upstreams

	t.Run("list and call", func(t *testing.T) {
		names := toolNames(t, c)
		for _, want := range []string{"legacy_echo", "modern_echo", "legacy_test_elicitation", "legacy_test_trigger_tool_change"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools through nginx lack %s: %q", want, names)
			}
		}
		rec.take()
		for i := range 3 {
			for _, name := range []string{"legacy_echo", "modern_echo"} {
				res, err := c.CallTool(ctx, name, map[string]any{"text": "hi " + strconv.Itoa(i)})
				if err != nil || textOf(res.Content) != "hi "+strconv.Itoa(i) {
					t.Fatalf("%s: %v", name, err)
				}
			}
		}
		answered := map[string]bool{}
		for _, h := range rec.take() {
			answered[h.upstream] = true
		}
		if len(answered) != 1 {
			t.Errorf("one caller's calls were answered by %v, want one replica (hash on the token)", answered)
		}
		mine := replicaOf(t, c, rec)
		for try := 0; other == nil; try++ {
			if try == 20 {
				t.Fatalf("20 callers all landed on %s", mine)
			}
			oc, orec := signIn(t)
			if replicaOf(t, oc, orec) != mine {
				other, otherRec = oc, orec
			}
		}
	})
	if other == nil {
		t.FailNow()
	}

	t.Run("input_required", func(t *testing.T) {
		rec.take()
		res, err := c.CallTool(ctx, "legacy_test_elicitation", map[string]any{"message": "who are you?"})
		if err != nil {
			t.Fatalf("legacy_test_elicitation: %v", err)
		}
		if text := textOf(res.Content); !strings.Contains(text, "action=accept") || !strings.Contains(text, "deployer") {
			t.Fatalf("legacy_test_elicitation answered %q, want the answer given", text)
		}
		var rounds []string
		for _, h := range rec.take() {
			if h.method == "tools/call" {
				rounds = append(rounds, h.upstream)
			}
		}
		if len(rounds) != 2 || rounds[0] != rounds[1] {
			t.Errorf("the call's rounds went to %q, want 2 rounds on one replica", rounds)
		}
	})

	t.Run("list_changed through Redis", func(t *testing.T) {
		changes := listenTools(t, c)
		if _, err := other.CallTool(ctx, "legacy_test_trigger_tool_change", nil); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changes:
		case <-time.After(30 * time.Second):
			t.Fatal("no list_changed on the listener for a change on the other replica")
		}
	})

	t.Run("a replica killed", func(t *testing.T) {
		victim := replicaOf(t, other, otherRec)
		pid := replicaPID(t, sh.Process.Pid, victim)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for i, cl := range []*client.Client{other, c, other, c} {
			var err error
			for attempt := 0; attempt < 2; attempt++ {
				var res *mcp.CallToolResult
				res, err = cl.CallTool(ctx, "modern_echo", map[string]any{"text": "still"})
				if err == nil && textOf(res.Content) != "still" {
					err = fmt.Errorf("answered %q", textOf(res.Content))
				}
				var e *mcp.Error
				if err == nil || !(strings.Contains(err.Error(), "502") || errors.As(err, &e) && e.Code == -32603) {
					break // a request in flight on the killed replica (502) is retried once
				}
			}
			if err != nil {
				t.Errorf("call %d with replica %s killed: %v", i, victim, err)
			}
		}
		if got := replicaOf(t, other, otherRec); got == victim {
			t.Errorf("the killed replica %s still answers", victim)
		}
	})
}

// replicaPID returns the pid of the child of parent whose command line
// holds addr (the replica listening there, 127.0.0.1:PORT).
func replicaPID(t *testing.T, parent int, addr string) int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(parent) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(st), "cmdline"))
		if bytes.Contains(cmdline, []byte("gateway")) && bytes.Contains(cmdline, []byte(addr)) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(st)))
			return pid
		}
	}
	t.Fatalf("no replica at %s among the children of %d", addr, parent)
	return 0
}
