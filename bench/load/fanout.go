package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpkit/mcpkit/bench/servers"
)

// FanoutListeners is the number of subscriptions/listen streams the
// fan-out case opens on one server process.
const FanoutListeners = 1000

// FanoutTriggers is the number of tool list changes the fan-out case
// triggers on each server process.
const FanoutTriggers = 5

// Fanout is one measured notification fan-out.
type Fanout struct {
	// Latency is from sending the tools/call of touch to the moment the
	// last listener received its notifications/tools/list_changed.
	Latency time.Duration
	// First is the same to the first listener's notification.
	First time.Duration
	// CPU is the server's CPU time over the same span (touch included),
	// from the threads' schedstat (nanoseconds, not /proc/PID/stat's 10 ms
	// ticks).
	CPU time.Duration
}

// ErrNoFanout is returned for an implementation that does no MCP work (the
// floor), which has no list changes to fan out.
var ErrNoFanout = errors.New("the floor does no MCP work: it has no tools list to change")

// touchBody is the tools/call of touch.
func touchBody(id int) []byte {
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":{},%s}}`, id, servers.TouchTool, requestMeta))
}

func touchHeaders() [][2]string {
	return [][2]string{
		{"Content-Type", "application/json"},
		{"Accept", "application/json, text/event-stream"},
		{"Mcp-Protocol-Version", ProtocolVersion},
		{"Mcp-Method", Call},
		{"Mcp-Name", servers.TouchTool},
	}
}

// MeasureFanout starts a fresh server process (argv, as for Start) for impl
// with the touch tool, opens listeners subscriptions/listen streams on it
// (each acknowledgment checked), and then triggers triggers tool list
// changes, one at a time, each by a tools/call of touch. For each it waits
// until every listener has received exactly one notification: method
// notifications/tools/list_changed, tagged with the listener's
// subscriptionId.
func MeasureFanout(argv []string, impl string, listeners, triggers int) ([]Fanout, error) {
	if impl == servers.Floor {
		return nil, ErrNoFanout
	}
	p, err := Start(append(slices.Clone(argv), "-touch"), impl, HTTP)
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	l, err := OpenListeners(p.URL, impl, listeners)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	w := watchNotifications(l.streams)
	defer w.close() // before l.Close: the readers stop reporting
	toucher, err := newHTTPConnHeaders(p.URL, touchHeaders())
	if err != nil {
		return nil, err
	}
	defer toucher.close()
	time.Sleep(100 * time.Millisecond) // let the server settle
	var out []Fanout
	for k := range triggers {
		cpu0, err := ProcCPUPrecise(p.Pid())
		if err != nil {
			return nil, err
		}
		_, delays, err := w.change(k+1, 10*time.Second, toucher.change(k+1))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", impl, err)
		}
		cpu1, err := ProcCPUPrecise(p.Pid())
		if err != nil {
			return nil, err
		}
		out = append(out, Fanout{Latency: slices.Max(delays), First: slices.Min(delays), CPU: cpu1 - cpu0})
		// A server that sends more than one notification per change
		// fails here rather than in the next change.
		if err := w.quiet(200 * time.Millisecond); err != nil {
			return nil, fmt.Errorf("%s: %w", impl, err)
		}
	}
	return out, nil
}

// change returns the trigger of the id-th tools list change: a tools/call
// of touch on c, its answer checked.
func (c *httpConn) change(id int) func() error {
	return func() error {
		status, msg, err := c.do(touchBody(id))
		if err == nil {
			err = checkTouch(status, msg, id)
		}
		if err != nil {
			return fmt.Errorf("tools/call %s: %w", servers.TouchTool, err)
		}
		return nil
	}
}

// checkTouch checks the answer to touch: a complete tool result with the
// text TouchText.
func checkTouch(status int, msg []byte, id int) error {
	if status != 200 {
		return fmt.Errorf("HTTP status %d: %.200q", status, msg)
	}
	var m struct {
		ID     int `json:"id"`
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &m); err != nil || m.Result == nil || m.ID != id ||
		m.Result.IsError || len(m.Result.Content) != 1 || m.Result.Content[0].Text != servers.TouchText {
		return fmt.Errorf("unexpected answer %.300q", msg)
	}
	return nil
}

// checkListChanged checks a notification on listen stream id.
func checkListChanged(msg []byte, id int) error {
	var m struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		ID      any    `json:"id"`
		Params  struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return fmt.Errorf("notification is not JSON: %v: %.200q", err, msg)
	}
	if m.JSONRPC != "2.0" || m.Method != "notifications/tools/list_changed" || m.ID != nil {
		return fmt.Errorf("got %.200q, want notifications/tools/list_changed", msg)
	}
	if sid := m.Params.Meta["io.modelcontextprotocol/subscriptionId"]; sid != float64(id) {
		return fmt.Errorf("subscriptionId is %v, want %d: %.200q", sid, id, msg)
	}
	return nil
}
