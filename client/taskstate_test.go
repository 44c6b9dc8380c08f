package client

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/mcp"
)

func TestTaskStateWire(t *testing.T) {
	at := time.Date(2026, 7, 28, 12, 0, 0, 500_000_000, time.UTC)
	for _, tt := range []struct {
		name, wire string
		want       TaskState
		err        bool
	}{
		{"full", `{"taskId":"t1","status":"input_required","statusMessage":"m","createdAt":"2026-07-28T12:00:00.5Z","lastUpdatedAt":"2026-07-28T12:00:00.5Z","ttlMs":60000,"pollIntervalMs":250,"inputRequests":{"k":{"method":"roots/list"}}}`,
			TaskState{TaskID: "t1", Status: mcp.TaskInputRequired, StatusMessage: "m", CreatedAt: at, LastUpdatedAt: at, TTL: time.Minute, PollInterval: 250 * time.Millisecond,
				InputRequests: map[string]json.RawMessage{"k": json.RawMessage(`{"method":"roots/list"}`)}}, false},
		{"absent and null", `{"taskId":"t2","status":"working","ttlMs":null}`, TaskState{TaskID: "t2", Status: mcp.TaskWorking}, false},
		{"huge ttl bounded to a year", `{"taskId":"t3","status":"working","ttlMs":9223372036854775807}`, TaskState{TaskID: "t3", Status: mcp.TaskWorking, TTL: 365 * 24 * time.Hour}, false},
		{"negative poll interval", `{"taskId":"t4","status":"working","pollIntervalMs":-1}`, TaskState{}, true},
		{"bad time", `{"taskId":"t5","status":"working","createdAt":"yesterday"}`, TaskState{}, true},
		{"not an object", `[]`, TaskState{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got TaskState
			err := json.Unmarshal([]byte(tt.wire), &got)
			if (err != nil) != tt.err {
				t.Fatalf("Unmarshal(%s) error %v, want error %v", tt.wire, err, tt.err)
			}
			if err != nil {
				return
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Unmarshal(%s) (-want +got):\n%s", tt.wire, d)
			}
		})
	}
}

// FuzzTaskState checks that any task a server sends decodes without a
// panic, and that what decodes survives MarshalJSON and UnmarshalJSON.
func FuzzTaskState(f *testing.F) {
	f.Add([]byte(`{"taskId":"t","status":"completed","createdAt":"2026-07-28T12:00:00Z","ttlMs":1,"pollIntervalMs":2,"result":{"content":[]}}`))
	f.Add([]byte(`{"taskId":"t","status":"failed","error":{"code":-32603,"message":"x"},"lastUpdatedAt":"2026-07-28T12:00:00.123456789+02:00"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var st TaskState
		if json.Unmarshal(raw, &st) != nil {
			return
		}
		if st.TTL < 0 || st.PollInterval < 0 {
			t.Fatalf("negative duration from %s: %+v", raw, st)
		}
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatalf("Marshal(%+v): %v", st, err)
		}
		var back TaskState
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("Unmarshal(Marshal) of %s: %v (%s)", raw, err, b)
		}
		// Times keep their instant; sub-millisecond durations are cut.
		st.TTL, back.TTL = st.TTL.Truncate(time.Millisecond), back.TTL.Truncate(time.Millisecond)
		st.PollInterval, back.PollInterval = st.PollInterval.Truncate(time.Millisecond), back.PollInterval.Truncate(time.Millisecond)
		if d := cmp.Diff(st, back, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
			cmp.Comparer(func(a, b json.RawMessage) bool { return jsonEqual(a, b) })); d != "" {
			t.Fatalf("round trip of %s (-first +second):\n%s", raw, d)
		}
	})
}

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	ea, eb := json.Unmarshal(a, &x), json.Unmarshal(b, &y)
	if ea != nil || eb != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}
