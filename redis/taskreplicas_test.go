package redis

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	mcpclient "github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/demo"
	"github.com/mcpkit/mcpkit/mcp"
)

// The multi-taskReplica tests run the demo server as separate processes (this
// test binary, started again with replicaEnv set) sharing one Redis, and
// check that a task started on one taskReplica is served by another: polled,
// cancelled, answered, and reported failed when its runner dies.

const (
	replicaEnv       = "MCPKIT_TEST_REPLICA_REDIS"
	replicaPrefixEnv = "MCPKIT_TEST_REPLICA_PREFIX"
	replicaHeartbeat = 200 * time.Millisecond
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(replicaEnv); addr != "" {
		os.Exit(runTaskReplica(addr, os.Getenv(replicaPrefixEnv)))
	}
	os.Exit(m.Run())
}

// runTaskReplica serves the demo server, with its tasks in the Redis at addr,
// on a free loopback port, until stdin closes (the test ended) or a
// signal.
func runTaskReplica(addr, prefix string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	rdb := goredis.NewClient(&goredis.Options{Addr: addr})
	defer rdb.Close()
	st := NewTaskStore(rdb, &TaskStoreOptions{Prefix: prefix, Logger: log})
	defer st.Close()
	s := demo.New(&mcp.ServerOptions{Logger: log, Tasks: mcp.TaskOptions{Store: st, Heartbeat: replicaHeartbeat}})
	// hold runs until cancelled, then leaves a mark in Redis, so that the
	// test can tell that the handler was stopped (not just the record).
	mcp.AddTool(s, &mcp.Tool{Name: "hold", Description: "Runs until cancelled.", TaskSupport: mcp.TaskRequired},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{ Mark string }) (string, error) {
			<-ctx.Done()
			rdb.Set(context.Background(), prefix+"stopped:"+in.Mark, "1", time.Minute)
			return "", ctx.Err()
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Error("listen", "err", err)
		return 1
	}
	hs := s.NewHTTPServer("", "/mcp")
	go hs.Serve(ln)
	fmt.Printf("url=http://%s/mcp\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin) // until the test closes it, or dies
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Shutdown(ctx)
	hs.Shutdown(ctx)
	return 0
}

// taskReplica is a replica process.
type taskReplica struct {
	url   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	c     *mcpclient.Client // see connect
}

func startTaskReplica(t *testing.T, redisAddr, prefix string) *taskReplica {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), replicaEnv+"="+redisAddr, replicaPrefixEnv+"="+prefix)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &taskReplica{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("taskReplica %s log:\n%s", r.url, logs.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "url=")
	if err != nil || !ok {
		t.Fatalf("taskReplica did not print its url: %q, %v", line, err)
	}
	r.url = url
	r.connect(t)
	return r
}

// stop ends the taskReplica gracefully.
func (r *taskReplica) stop() {
	if r.cmd.ProcessState != nil {
		return
	}
	r.stdin.Close()
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.cmd.Process.Kill()
		<-done
	}
}

// kill ends the taskReplica abruptly, as a crash would.
func (r *taskReplica) kill() {
	r.cmd.Process.Kill()
	r.cmd.Wait()
}

type taskRPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// connect connects the replica's client: it declares the tasks extension
// and elicitation (with an Elicit handler that is never asked: these tests
// answer a task's input with tasks/update). The client lives as long as
// the test that started the replica.
func (r *taskReplica) connect(t *testing.T) {
	t.Helper()
	c, err := mcpclient.Connect(context.Background(), &mcpclient.HTTPTransport{URL: r.url}, &mcpclient.Options{
		Tasks:   true,
		NoCache: true,
		Elicit: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return nil, fmt.Errorf("unexpected elicitation %q", p.Message)
		},
	})
	if err != nil {
		t.Fatalf("connecting to %s: %v", r.url, err)
	}
	t.Cleanup(func() { c.Close() })
	r.c = c
}

// call sends one request to the taskReplica through the public client
// and returns its result or error.
func (r *taskReplica) call(t *testing.T, method string, params map[string]any) (map[string]any, *taskRPCError) {
	t.Helper()
	raw, err := r.c.Call(context.Background(), method, params)
	if err != nil {
		var e *mcp.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v", method, err)
		}
		data, _ := json.Marshal(e.Data)
		return nil, &taskRPCError{Code: e.Code, Message: e.Message, Data: data}
	}
	var res map[string]any
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("%s: decoding the result: %v", method, err)
	}
	return res, nil
}

// start calls a tool that must answer with a task, and returns its id.
func (r *taskReplica) start(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	res, e := r.call(t, "tools/call", map[string]any{"name": tool, "arguments": args})
	if e != nil || res["resultType"] != "task" {
		t.Fatalf("tools/call %s = %v, %+v; want a CreateTaskResult", tool, res, e)
	}
	return res["taskId"].(string)
}

// get calls tasks/get.
func (r *taskReplica) get(t *testing.T, id string) map[string]any {
	t.Helper()
	res, e := r.call(t, "tasks/get", map[string]any{"taskId": id})
	if e != nil {
		t.Fatalf("tasks/get %s: %+v", id, e)
	}
	return res
}

// await polls tasks/get until the task's status is one of want, and
// returns the task.
func (r *taskReplica) await(t *testing.T, id string, within time.Duration, want ...string) map[string]any {
	t.Helper()
	// The task runs in another process: tasks/get is how a client learns
	// its status, polled with a deadline.
	var task map[string]any
	waitFor(t, within, fmt.Sprintf("task %s to be one of %v", id, want), func() bool {
		task = r.get(t, id)
		st, _ := task["status"].(string)
		return slices.Contains(want, st)
	})
	return task
}

func taskResultText(task map[string]any) string {
	res, _ := task["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	first, _ := content[0].(map[string]any)
	s, _ := first["text"].(string)
	return s
}

func TestTaskReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	rs := startRedis(t)
	addr := fmt.Sprintf("127.0.0.1:%d", rs.Port)
	rdb := newTaskClient(t, addr)
	const prefix = "replicas:"
	a := startTaskReplica(t, addr, prefix)
	b := startTaskReplica(t, addr, prefix)

	t.Run("PollElsewhere", func(t *testing.T) {
		id := a.start(t, "slow_compute", map[string]any{"seconds": 1.5, "label": "replicated"})
		// Durable before the handle was sent: the other taskReplica knows it at once.
		if st := b.get(t, id)["status"]; st != "working" {
			t.Errorf("B sees status %v right after A created the task, want working", st)
		}
		task := b.await(t, id, 10*time.Second, "completed", "failed", "cancelled")
		if task["status"] != "completed" || taskResultText(task) != "Computed replicated in 1.5 seconds." {
			t.Errorf("B sees %v with result %q", task["status"], taskResultText(task))
		}
	})

	t.Run("CancelElsewhere", func(t *testing.T) {
		id := a.start(t, "hold", map[string]any{"Mark": "cancel-elsewhere"})
		if _, e := b.call(t, "tasks/cancel", map[string]any{"taskId": id}); e != nil {
			t.Fatalf("tasks/cancel on B: %+v", e)
		}
		if st := a.get(t, id)["status"]; st != "cancelled" {
			t.Errorf("A sees %v after B cancelled the task, want cancelled", st)
		}
		// The handler on A (another process) was stopped: it left its mark
		// in Redis.
		waitFor(t, 5*time.Second, "the handler on A to stop after B cancelled its task", func() bool {
			return rdb.Exists(context.Background(), prefix+"stopped:cancel-elsewhere").Val() != 0
		})
	})

	t.Run("InputElsewhere", func(t *testing.T) {
		// The task parks on A; the answer reaches B, which runs the
		// handler again; A reports the result.
		id := a.start(t, "confirm_delete", map[string]any{"filename": "replicated.txt"})
		task := b.await(t, id, 5*time.Second, "input_required")
		if reqs, _ := task["inputRequests"].(map[string]any); reqs["confirm"] == nil {
			t.Fatalf("B sees input requests %v, want confirm", task["inputRequests"])
		}
		if _, e := b.call(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
			"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}},
		}}); e != nil {
			t.Fatalf("tasks/update on B: %+v", e)
		}
		task = a.await(t, id, 10*time.Second, "completed", "failed", "cancelled")
		if taskResultText(task) != "Deleted replicated.txt." {
			t.Errorf("A sees %v with result %q", task["status"], taskResultText(task))
		}
	})

	t.Run("RunnerDies", func(t *testing.T) {
		c := startTaskReplica(t, addr, prefix)
		id := c.start(t, "hold", map[string]any{"Mark": "runner-dies"})
		c.kill()
		task := b.await(t, id, 10*time.Second, "failed", "completed", "cancelled")
		errObj, _ := task["error"].(map[string]any)
		if task["status"] != "failed" || errObj["code"] != float64(-32603) {
			t.Errorf("a task whose runner died is %v with error %v; want failed with -32603", task["status"], errObj)
		}
	})

	t.Run("ShutdownFailsRunningTasks", func(t *testing.T) {
		c := startTaskReplica(t, addr, prefix)
		id := c.start(t, "hold", map[string]any{"Mark": "shutdown"})
		c.stop()
		task := b.get(t, id)
		if task["status"] != "failed" || !strings.Contains(task["statusMessage"].(string), "shut down") {
			t.Errorf("after its runner shut down the task is %v (%v); want failed, saying so", task["status"], task["statusMessage"])
		}
	})
}
