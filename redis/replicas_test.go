package redis

// The multi-replica test: three `mcpkit serve --redis` processes with a
// shared requestState key behind nginx round-robin (no sticky sessions),
// Redis carrying change notifications between them. docs/scaling.md walks
// through it as the worked example of a deployment.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// replica is one `mcpkit serve` process.
type replica struct {
	cmd  *exec.Cmd
	addr string // 127.0.0.1:PORT, as nginx's $upstream_addr names it
	logs *logBuffer
	done chan struct{} // closed when the process has exited
}

// buildMcpkit builds the full build of mcpkit (the one with --redis),
// from the nested module next to this one, which uses this module's
// code (a replace directive).
func buildMcpkit(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpkit")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/mcpkit")
	cmd.Dir = filepath.Join("..", "full")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build ../full/cmd/mcpkit: %v\n%s", err, out)
	}
	return bin
}

var urlRe = regexp.MustCompile(`msg=listening url=http://(127\.0\.0\.1:\d+)/mcp`)

// startReplica starts `mcpkit serve` on a free port and waits until it
// listens. The process is killed when the test ends.
func startReplica(t *testing.T, bin string, args ...string) *replica {
	t.Helper()
	r := &replica{logs: &logBuffer{}, done: make(chan struct{})}
	r.cmd = exec.Command(bin, append([]string{"serve", "--fixtures", "--addr", "127.0.0.1:0"}, args...)...)
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.done
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			r.logs.Write(append(sc.Bytes(), '\n'))
			if m := urlRe.FindSubmatch(sc.Bytes()); m != nil {
				select {
				case addr <- string(m[1]):
				default:
				}
			}
		}
		r.cmd.Wait()
		close(r.done)
	}()
	select {
	case r.addr = <-addr:
	case <-r.done:
		t.Fatalf("mcpkit serve exited:\n%s", r.logs)
	case <-time.After(20 * time.Second):
		t.Fatalf("mcpkit serve did not listen within 20s:\n%s", r.logs)
	}
	return r
}

// The nginx configuration: loopback only, files in the test's directory,
// round-robin over the replicas, and what SSE needs: HTTP/1.1 to the
// upstreams, no buffering, a long read timeout, and the client's Host
// (mcpkit checks Host on loopback against DNS rebinding). X-Upstream tells
// the test which replica answered.
var nginxConf = template.Must(template.New("nginx").Parse(`
daemon off;
master_process on;
worker_processes 1;
{{if .Root}}user root;{{end}}
pid {{.Dir}}/nginx.pid;
error_log {{.Dir}}/error.log warn;
events { worker_connections 512; }
http {
	access_log off;
	client_body_temp_path {{.Dir}}/body;
	proxy_temp_path {{.Dir}}/proxy;
	fastcgi_temp_path {{.Dir}}/fastcgi;
	uwsgi_temp_path {{.Dir}}/uwsgi;
	scgi_temp_path {{.Dir}}/scgi;

	upstream mcp {
{{range .Upstreams}}		server {{.}} max_fails=1 fail_timeout=10s;
{{end}}		keepalive 16;
	}
	server {
		listen 127.0.0.1:{{.Port}};
		location /mcp {
			proxy_pass http://mcp;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_set_header Host $http_host;
			proxy_buffering off;
			proxy_cache off;
			proxy_read_timeout 1h;
			proxy_send_timeout 1h;
			add_header X-Upstream $upstream_addr always;
		}
	}
}
`))

// startNginx starts nginx in front of the upstreams and returns the MCP
// endpoint URL, or skips the test when nginx is not installed (CI installs
// Debian's nginx: scripts/lib.sh).
func startNginx(t *testing.T, upstreams []string) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed (Debian package nginx: apt-get install -y nginx); skipping the multi-replica test")
		}
		bin = "/usr/sbin/nginx"
	}
	dir := t.TempDir()
	port := freePort(t)
	var conf bytes.Buffer
	nginxConf.Execute(&conf, map[string]any{"Dir": dir, "Port": port, "Upstreams": upstreams, "Root": os.Geteuid() == 0})
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, conf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT) // graceful: the master takes its workers along
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx error log:\n%s", log)
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	// nginx (a child process) owns the time it takes to listen, and says
	// nothing when it does: poll it, with a deadline.
	waitFor(t, 10*time.Second, fmt.Sprintf("nginx to come up on port %d", port), func() bool {
		select {
		case <-exited:
			t.Fatalf("nginx exited: %s", out.String())
		default:
		}
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true // any answer (405 from a replica) means nginx is up
	})
	return url
}

// client talks to the replicas through nginx.
type client struct {
	url  string
	http *http.Client
	ids  atomic.Int64
}

// response is one answer through nginx: the replica that sent it, the
// HTTP status, and the JSON-RPC message (the last SSE event, for streams).
type response struct {
	upstream string
	status   int
	msg      struct {
		ID     json.RawMessage `json:"id"`
		Result map[string]any  `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
}

// taskMeta is the _meta of a client that declares the tasks extension
// (and elicitation, for tasks that ask).
const taskMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// elicitMeta is the _meta of a client that declares elicitation, as MRTR
// requests that ask for input need.
const elicitMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

// newRequest builds a POST of a 2026-07-28 request; params is the params
// object's members besides _meta (may be empty), and may start with its own
// _meta member (taskMeta, elicitMeta), which is then sent as it is.
func (c *client) newRequest(ctx context.Context, id, method, name, params string) *http.Request {
	r := mcpwire.Request{ID: id, Method: method, Name: name, Params: "{" + params + "}", NoMeta: strings.HasPrefix(params, `"_meta":`)}
	req, err := r.NewRequest(ctx, c.url)
	if err != nil {
		panic(err) // c.url is the test's own nginx URL
	}
	return req
}

// call sends one request and reads its response.
func (c *client) call(ctx context.Context, method, name, params string) (*response, error) {
	id := fmt.Sprint(c.ids.Add(1))
	resp, err := c.http.Do(c.newRequest(ctx, id, method, name, params))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &response{upstream: resp.Header.Get("X-Upstream"), status: resp.StatusCode}
	got, err := mcpwire.Read(resp)
	if err != nil {
		return r, err
	}
	body := got.Last()
	if body == nil {
		body = got.Raw // not JSON-RPC (an nginx error page, say): shown below
	}
	if err := json.Unmarshal(body, &r.msg); err != nil {
		return r, fmt.Errorf("HTTP %d from %s: %q", resp.StatusCode, r.upstream, body)
	}
	if string(r.msg.ID) != id {
		return r, fmt.Errorf("response id %s to request %s", r.msg.ID, id)
	}
	return r, nil
}

// listener is a subscriptions/listen stream through nginx.
type listener struct {
	upstream string
	frames   chan map[string]any
	body     io.Closer
}

func (c *client) listen(t *testing.T, id, filter string) *listener {
	t.Helper()
	return c.listenParams(t, id, `"notifications":`+filter)
}

// listenParams opens a listen stream with the given params members (which
// may start with their own _meta).
func (c *client) listenParams(t *testing.T, id, params string) *listener {
	t.Helper()
	resp, err := c.http.Do(c.newRequest(context.Background(), id, "subscriptions/listen", "", params))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("listen: HTTP %d: %s", resp.StatusCode, b)
	}
	l := &listener{upstream: resp.Header.Get("X-Upstream"), frames: make(chan map[string]any, 100), body: resp.Body}
	go func() {
		defer close(l.frames)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var f map[string]any
				json.Unmarshal([]byte(d), &f)
				l.frames <- f
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return l
}

// next returns the next frame within d, or nil when the stream ended.
func (l *listener) next(t *testing.T, d time.Duration) map[string]any {
	t.Helper()
	select {
	case f := <-l.frames:
		return f
	case <-time.After(d):
		t.Fatalf("no frame from the listener on %s within %v", l.upstream, d)
	}
	return nil
}

func TestReplicasBehindNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("the multi-replica test starts Redis, nginx and three servers")
	}
	rs := startRedis(t)
	bin := buildMcpkit(t)
	// One requestState key shared by every replica, so that any of them
	// can open what another sealed.
	key := make([]byte, 32)
	rand.Read(key)
	keyFile := filepath.Join(t.TempDir(), "state.key")
	if err := os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--redis", rs.URL(), "--state-key-file", keyFile}
	var replicas []*replica
	var addrs []string
	for range 3 {
		r := startReplica(t, bin, args...)
		replicas = append(replicas, r)
		addrs = append(addrs, r.addr)
	}
	c := &client{url: startNginx(t, addrs), http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	ctx := context.Background()
	defer func() {
		if t.Failed() {
			for i, r := range replicas {
				t.Logf("replica %d (%s) log:\n%s", i, r.addr, r.logs)
			}
		}
	}()

	t.Run("list_changed from another replica reaches a listener", func(t *testing.T) {
		l := c.listen(t, `"across"`, `{"toolsListChanged":true}`)
		if f := l.next(t, 5*time.Second); f["method"] != "notifications/subscriptions/acknowledged" {
			t.Fatalf("first frame %v", f)
		}
		// Each trigger call changes the tools of the replica nginx sends
		// it to; round-robin sends the second one elsewhere at the latest.
		for i := 0; ; i++ {
			r, err := c.call(ctx, "tools/call", "test_trigger_tool_change", `"name":"test_trigger_tool_change"`)
			if err != nil || r.msg.Result == nil {
				t.Fatalf("trigger: %v %+v", err, r)
			}
			f := l.next(t, 5*time.Second)
			if f["method"] != "notifications/tools/list_changed" {
				t.Fatalf("got %v, want notifications/tools/list_changed", f)
			}
			if m, _ := f["params"].(map[string]any)["_meta"].(map[string]any); m["io.modelcontextprotocol/subscriptionId"] != "across" {
				t.Errorf("notification not tagged with the subscription: %v", f)
			}
			if r.upstream != l.upstream {
				t.Logf("listener on %s got the change made on %s", l.upstream, r.upstream)
				break
			}
			if i == 5 {
				t.Fatalf("six trigger calls all went to the listener's replica %s: no round-robin?", l.upstream)
			}
		}
	})

	t.Run("MRTR round trip across replicas", func(t *testing.T) {
		const tool = "test_input_required_result_request_state"
		for attempt := 0; attempt < 5; attempt++ {
			r1, err := c.call(ctx, "tools/call", tool, elicitMeta+`,"name":"`+tool+`","arguments":{}`)
			if err != nil || r1.msg.Result == nil {
				t.Fatalf("round 1: %v %+v", err, r1)
			}
			res := r1.msg.Result
			state, _ := res["requestState"].(string)
			reqs, _ := res["inputRequests"].(map[string]any)
			if res["resultType"] != "input_required" || state == "" || len(reqs) == 0 {
				t.Fatalf("round 1 is not an InputRequiredResult with requestState: %v", res)
			}
			answers := map[string]any{}
			for k := range reqs {
				answers[k] = map[string]any{"action": "accept", "content": map[string]any{"ok": true}}
			}
			ir, _ := json.Marshal(answers)
			st, _ := json.Marshal(state)
			r2, err := c.call(ctx, "tools/call", tool,
				elicitMeta+`,"name":"`+tool+`","arguments":{},"inputResponses":`+string(ir)+`,"requestState":`+string(st))
			if err != nil {
				t.Fatalf("round 2: %v", err)
			}
			if r2.msg.Error != nil || r2.msg.Result["resultType"] != "complete" {
				t.Fatalf("round 2 on %s (round 1 on %s): %+v", r2.upstream, r1.upstream, r2.msg)
			}
			content, _ := r2.msg.Result["content"].([]any)
			text := ""
			if len(content) > 0 {
				text, _ = content[0].(map[string]any)["text"].(string)
			}
			if !strings.Contains(text, "state-ok") {
				t.Fatalf("round 2 did not get its state back: %q", text)
			}
			if r1.upstream == r2.upstream {
				continue
			}
			t.Logf("round 1 on %s, round 2 on %s: %s", r1.upstream, r2.upstream, text)

			// The control: a replica without the shared key cannot open
			// the state, so it is the key that makes this work.
			other := startReplica(t, bin, "--redis", rs.URL())
			direct := &client{url: "http://" + other.addr + "/mcp", http: c.http}
			r3, err := direct.call(ctx, "tools/call", tool,
				elicitMeta+`,"name":"`+tool+`","arguments":{},"inputResponses":`+string(ir)+`,"requestState":`+string(st))
			if err != nil || r3.msg.Error == nil {
				t.Errorf("a replica with another key accepted the state: %v %+v", err, r3)
			} else {
				t.Logf("a replica with another key refuses it: %d %s", r3.msg.Error.Code, r3.msg.Error.Message)
			}
			other.cmd.Process.Kill()
			return
		}
		t.Fatal("both rounds always went to one replica: no round-robin?")
	})

	t.Run("a legacy session opened on one replica is served by all", func(t *testing.T) {
		// `serve --redis` keeps legacy sessions in Redis: round-robin
		// sends a session's requests to every replica, and each serves it
		// with the state another one stored.
		sid := ""
		post := func(body string) (status int, upstream string, frames []map[string]any) {
			t.Helper()
			req, err := mcpwire.Request{Legacy: true, Session: sid, Body: []byte(body)}.NewRequest(ctx, c.url)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
				sid = id
			}
			got, err := mcpwire.Read(resp)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range got.Messages {
				var f map[string]any
				if json.Unmarshal(l, &f) == nil {
					frames = append(frames, f)
				}
			}
			return resp.StatusCode, resp.Header.Get("X-Upstream"), frames
		}
		status, first, frames := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"legacy","version":"1"}}}`)
		if status != 200 || sid == "" || len(frames) != 1 || frames[0]["result"] == nil {
			t.Fatalf("initialize: HTTP %d, session %q, %v", status, sid, frames)
		}
		if status, _, _ := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != 202 {
			t.Fatalf("notifications/initialized: HTTP %d", status)
		}
		if status, _, frames := post(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`); status != 200 || len(frames) != 1 || frames[0]["result"] == nil {
			t.Fatalf("logging/setLevel: HTTP %d %v", status, frames)
		}
		// Every replica logs at the level set through another one.
		served := map[string]bool{}
		for i := range 6 {
			status, up, frames := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_logging_tool","arguments":{}}}`, 10+i))
			if status != 200 || len(frames) != 2 || frames[0]["method"] != "notifications/message" || frames[1]["result"] == nil {
				t.Fatalf("tools/call on %s: HTTP %d, frames %v; want the log message, then the result", up, status, frames)
			}
			served[up] = true
		}
		if len(served) < 2 || (len(served) == 1 && served[first]) {
			t.Fatalf("the session's calls all went to %v: no round-robin?", served)
		}
		t.Logf("session %s opened on %s, served by %d replicas", sid, first, len(served))
		// DELETE through one replica ends the session on all of them.
		req, _ := mcpwire.Request{Legacy: true, Session: sid, HTTPMethod: http.MethodDelete}.NewRequest(ctx, c.url)
		resp, err := c.http.Do(req)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE: %v %v", err, resp)
		}
		resp.Body.Close()
		for i := range 3 {
			if status, up, _ := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 20+i)); status != http.StatusNotFound {
				t.Errorf("ping after DELETE on %s: HTTP %d, want 404", up, status)
			}
		}
	})

	t.Run("tasks started on one replica are served by the others", func(t *testing.T) {
		// `serve --redis` keeps tasks in Redis: round-robin sends the
		// polls, the answer and the cancellation of a task to replicas
		// other than the one that runs it.
		start := func(tool, args string) (string, string) {
			t.Helper()
			r, err := c.call(ctx, "tools/call", tool, taskMeta+`,"name":"`+tool+`","arguments":`+args)
			if err != nil || r.msg.Result["resultType"] != "task" {
				t.Fatalf("tools/call %s: %v %+v; want a CreateTaskResult", tool, err, r)
			}
			return r.msg.Result["taskId"].(string), r.upstream
		}
		await := func(id string, want ...string) (map[string]any, map[string]bool) {
			t.Helper()
			seen := map[string]bool{}
			var task map[string]any
			// The task runs in another process: tasks/get is how a client
			// learns its status, polled with a deadline.
			waitFor(t, 15*time.Second, fmt.Sprintf("task %s to be one of %v", id, want), func() bool {
				r, err := c.call(ctx, "tasks/get", id, taskMeta+`,"taskId":"`+id+`"`)
				if err != nil || r.msg.Result == nil {
					t.Fatalf("tasks/get: %v %+v", err, r)
				}
				seen[r.upstream] = true
				task = r.msg.Result
				st, _ := task["status"].(string)
				return slices.Contains(want, st)
			})
			return task, seen
		}
		text := func(task map[string]any) string {
			res, _ := task["result"].(map[string]any)
			content, _ := res["content"].([]any)
			if len(content) == 0 {
				return ""
			}
			s, _ := content[0].(map[string]any)["text"].(string)
			return s
		}

		id, runner := start("slow_compute", `{"seconds":1,"label":"replicated"}`)
		task, seen := await(id, "completed", "failed", "cancelled")
		if text(task) != "Computed replicated in 1 seconds." {
			t.Errorf("task %v with result %q", task["status"], text(task))
		}
		delete(seen, runner)
		if len(seen) == 0 {
			t.Errorf("every poll went to the runner %s: no round-robin?", runner)
		}
		t.Logf("task run on %s, polled on %v too", runner, seen)

		id, _ = start("confirm_delete", `{"filename":"shared.txt"}`)
		await(id, "input_required")
		r, err := c.call(ctx, "tasks/update", id, taskMeta+`,"taskId":"`+id+`","inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}}`)
		if err != nil || r.msg.Result["resultType"] != "complete" {
			t.Fatalf("tasks/update: %v %+v", err, r)
		}
		if task, _ := await(id, "completed", "failed", "cancelled"); text(task) != "Deleted shared.txt." {
			t.Errorf("task %v with result %q", task["status"], text(task))
		}

		// A listener on another replica than the runner hears of the
		// task's changes, through the Redis bus.
		id, runner = start("slow_compute", `{"seconds":1,"label":"heard"}`)
		var l *listener
		for i := 0; i < 6 && l == nil; i++ {
			cand := c.listenParams(t, fmt.Sprintf(`"task-%d"`, i), taskMeta+`,"notifications":{"taskIds":["`+id+`"]}`)
			ack := cand.next(t, 5*time.Second)
			if n, _ := ack["params"].(map[string]any)["notifications"].(map[string]any); len(n["taskIds"].([]any)) != 1 {
				t.Fatalf("acknowledgement %v; want the task", ack)
			}
			if cand.upstream != runner {
				l = cand
			} else {
				cand.body.Close()
			}
		}
		if l == nil {
			t.Fatalf("every listen stream went to the runner %s", runner)
		}
		for {
			f := l.next(t, 10*time.Second)
			p, _ := f["params"].(map[string]any)
			if f["method"] != "notifications/tasks" || p["taskId"] != id {
				t.Fatalf("frame %v; want notifications/tasks", f)
			}
			if p["status"] == "completed" {
				t.Logf("listener on %s heard task %s (run on %s) complete", l.upstream, id, runner)
				break
			}
		}
		l.body.Close()

		id, runner = start("slow_compute", `{"seconds":600}`)
		r, err = c.call(ctx, "tasks/cancel", id, taskMeta+`,"taskId":"`+id+`"`)
		if err != nil || r.msg.Result["resultType"] != "complete" {
			t.Fatalf("tasks/cancel: %v %+v", err, r)
		}
		if task, _ := await(id, "cancelled", "completed", "failed"); task["status"] != "cancelled" {
			t.Errorf("a task cancelled on %s (run on %s) is %v", r.upstream, runner, task["status"])
		}
	})

	t.Run("replica killed under load loses nothing the client retries", func(t *testing.T) {
		const workers = 4
		var total, retried, lost atomic.Int64
		var firstErr atomic.Value
		// The victim is killed once the load is under way: after the
		// workers' first 40 requests (Add returns each count once).
		const beforeKill = 40
		underWay := make(chan struct{})
		stop := time.Now().Add(3 * time.Second)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := 0; i < 5000 && time.Now().Before(stop); i++ { // bounded in count and time
					method, name, params := "server/discover", "", ""
					if i%2 == 1 {
						method, name, params = "tools/call", "echo", fmt.Sprintf(`"name":"echo","arguments":{"text":"w%d-%d"}`, w, i)
					}
					if total.Add(1) == beforeKill {
						close(underWay)
					}
					ok := false
					for attempt := 0; attempt < 5 && !ok; attempt++ {
						if attempt > 0 {
							retried.Add(1)
							// A client's back-off before it retries on
							// another replica: real time, as nginx's is.
							time.Sleep(50 * time.Millisecond)
						}
						rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
						r, err := c.call(rctx, method, name, params)
						cancel()
						ok = err == nil && r.status == 200 && r.msg.Result != nil
						if ok && method == "tools/call" {
							content, _ := r.msg.Result["content"].([]any)
							text := ""
							if len(content) > 0 {
								text, _ = content[0].(map[string]any)["text"].(string)
							}
							ok = strings.Contains(params, `"text":"`+text+`"`)
						}
						if !ok && err != nil {
							firstErr.CompareAndSwap(nil, err)
						}
					}
					if !ok {
						lost.Add(1)
					}
				}
			})
		}
		select {
		case <-underWay:
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d requests in 10s: the load did not run", total.Load())
		}
		victim := replicas[1]
		victim.cmd.Process.Kill()
		<-victim.done
		t.Logf("killed replica %s under load", victim.addr)
		wg.Wait()
		t.Logf("%d requests, %d retries, %d lost (first error: %v)", total.Load(), retried.Load(), lost.Load(), firstErr.Load())
		if lost.Load() != 0 {
			t.Errorf("%d requests failed after 5 attempts", lost.Load())
		}
		if total.Load() < 50 {
			t.Errorf("only %d requests in 3s: the load did not run", total.Load())
		}
	})

	t.Run("replica stopped with SIGTERM ends its listen streams gracefully", func(t *testing.T) {
		victim := replicas[2]
		var l *listener
		for i := 0; i < 6 && l == nil; i++ {
			cand := c.listen(t, fmt.Sprintf(`"graceful-%d"`, i), `{"toolsListChanged":true}`)
			cand.next(t, 5*time.Second) // the acknowledgement
			if cand.upstream == victim.addr {
				l = cand
			} else {
				cand.body.Close()
			}
		}
		if l == nil {
			t.Fatalf("no listen stream reached replica %s", victim.addr)
		}
		victim.cmd.Process.Signal(syscall.SIGTERM)
		f := l.next(t, 10*time.Second)
		res, _ := f["result"].(map[string]any)
		m, _ := res["_meta"].(map[string]any)
		if f["id"] == nil || res["resultType"] != "complete" || m["io.modelcontextprotocol/subscriptionId"] != f["id"] {
			t.Errorf("got %v, want the graceful SubscriptionsListenResult", f)
		}
		select {
		case <-victim.done:
		case <-time.After(10 * time.Second):
			t.Error("the replica did not exit within 10s of SIGTERM")
		}
		// The remaining replica serves on.
		r, err := c.call(ctx, "server/discover", "", "")
		if err != nil || r.msg.Result == nil {
			t.Errorf("discover after two replicas went away: %v %+v", err, r)
		}
	})
}
