package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestTaskStore checks that a TaskStore implementation behaves as mcp
// expects: records round-trip without loss, updates are atomic, records
// expire, and published ids reach subscribers. newStore returns an empty
// store for each subtest; several stores it returns for one test must not
// share records (a Redis store, for example, gets a fresh key prefix).
// It is the same suite mcp's MemoryTaskStore and the Redis store pass:
//
//	func TestMyStore(t *testing.T) {
//		mcptest.TestTaskStore(t, func(t *testing.T) mcp.TaskStore { return newMyStore(t) })
//	}
func TestTaskStore(t *testing.T, newStore func(t *testing.T) mcp.TaskStore) {
	ctx := context.Background()
	t.Run("RoundTrip", func(t *testing.T) {
		st := newStore(t)
		want := sampleRecord("t1", time.Now())
		if err := st.Create(ctx, want); err != nil {
			t.Fatalf("Create: %v", err)
		}
		got, err := st.Get(ctx, "t1")
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Get after Create (-want +got):\n%s", diff)
		}
		// What Get returns is the caller's: changing it changes nothing.
		got.Status = mcp.TaskFailed
		got.Answers["k"] = json.RawMessage(`{"changed":true}`)
		again, _ := st.Get(ctx, "t1")
		if diff := cmp.Diff(want, again); diff != "" {
			t.Errorf("a returned record is shared with the store (-want +got):\n%s", diff)
		}
	})
	t.Run("CreateTwice", func(t *testing.T) {
		st := newStore(t)
		rec := sampleRecord("t1", time.Now())
		if err := st.Create(ctx, rec); err != nil {
			t.Fatalf("Create: %v", err)
		}
		if err := st.Create(ctx, rec); !errors.Is(err, mcp.ErrTaskExists) {
			t.Errorf("second Create = %v, want ErrTaskExists", err)
		}
	})
	t.Run("Unknown", func(t *testing.T) {
		st := newStore(t)
		if _, err := st.Get(ctx, "nope"); !errors.Is(err, mcp.ErrTaskNotFound) {
			t.Errorf("Get = %v, want ErrTaskNotFound", err)
		}
		_, err := st.Update(ctx, "nope", func(*mcp.TaskRecord) (bool, error) { return true, nil })
		if !errors.Is(err, mcp.ErrTaskNotFound) {
			t.Errorf("Update = %v, want ErrTaskNotFound", err)
		}
	})
	t.Run("Update", func(t *testing.T) {
		st := newStore(t)
		now := time.Now()
		if err := st.Create(ctx, sampleRecord("t1", now)); err != nil {
			t.Fatal(err)
		}
		got, err := st.Update(ctx, "t1", func(r *mcp.TaskRecord) (bool, error) {
			r.Status = mcp.TaskCompleted
			r.Result = json.RawMessage(`{"content":[]}`)
			r.InputRequests = nil
			return true, nil
		})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		want := sampleRecord("t1", now)
		want.Status, want.Result, want.InputRequests = mcp.TaskCompleted, json.RawMessage(`{"content":[]}`), nil
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Update returned (-want +got):\n%s", diff)
		}
		stored, _ := st.Get(ctx, "t1")
		if diff := cmp.Diff(want, stored); diff != "" {
			t.Errorf("Get after Update (-want +got):\n%s", diff)
		}
		// No change: nothing written, the current record returned.
		got, err = st.Update(ctx, "t1", func(r *mcp.TaskRecord) (bool, error) {
			r.Status = mcp.TaskFailed
			return false, nil
		})
		if err != nil || got.Status != mcp.TaskCompleted {
			t.Errorf("Update without change = %v, %v; want the stored record", got, err)
		}
		if stored, _ := st.Get(ctx, "t1"); stored.Status != mcp.TaskCompleted {
			t.Errorf("Update without change stored status %q", stored.Status)
		}
		// An error aborts the update and comes back.
		boom := errors.New("boom")
		if _, err := st.Update(ctx, "t1", func(r *mcp.TaskRecord) (bool, error) {
			r.Status = mcp.TaskFailed
			return true, boom
		}); !errors.Is(err, boom) {
			t.Errorf("Update = %v, want fn's error", err)
		}
		if stored, _ := st.Get(ctx, "t1"); stored.Status != mcp.TaskCompleted {
			t.Errorf("failed Update stored status %q", stored.Status)
		}
	})
	t.Run("ConcurrentUpdates", func(t *testing.T) {
		st := newStore(t)
		if err := st.Create(ctx, sampleRecord("t1", time.Now())); err != nil {
			t.Fatal(err)
		}
		const n = 20
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, err := st.Update(ctx, "t1", func(r *mcp.TaskRecord) (bool, error) {
					if r.Answers == nil {
						r.Answers = map[string]json.RawMessage{}
					}
					r.Answers[fmt.Sprint("a", i)] = json.RawMessage(`{}`)
					return true, nil
				})
				if err != nil {
					t.Errorf("Update %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		got, _ := st.Get(ctx, "t1")
		if len(got.Answers) != n+1 { // sampleRecord has one
			t.Errorf("after %d concurrent updates the record has %d answers, want %d: an update was lost", n, len(got.Answers), n+1)
		}
	})
	t.Run("Expiry", func(t *testing.T) {
		st := newStore(t)
		now := time.Now()
		short := sampleRecord("short", now)
		short.TTL = 300 * time.Millisecond
		forever := sampleRecord("forever", now)
		forever.TTL = 0
		for _, r := range []*mcp.TaskRecord{short, forever} {
			if err := st.Create(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.Get(ctx, "short"); err != nil {
			t.Fatalf("Get before expiry: %v", err)
		}
		time.Sleep(time.Until(now.Add(short.TTL + 200*time.Millisecond)))
		if _, err := st.Get(ctx, "short"); !errors.Is(err, mcp.ErrTaskNotFound) {
			t.Errorf("Get after expiry = %v, want ErrTaskNotFound", err)
		}
		if _, err := st.Get(ctx, "forever"); err != nil {
			t.Errorf("Get of a record without TTL: %v", err)
		}
		// Extending the TTL in an update keeps a record longer.
		ext := sampleRecord("ext", time.Now())
		ext.TTL = 300 * time.Millisecond
		if err := st.Create(ctx, ext); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Update(ctx, "ext", func(r *mcp.TaskRecord) (bool, error) {
			r.TTL = time.Hour
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		if _, err := st.Get(ctx, "ext"); err != nil {
			t.Errorf("Get after the TTL was extended: %v", err)
		}
	})
	t.Run("PublishSubscribe", func(t *testing.T) {
		st := newStore(t)
		got := make(chan string, 10)
		unsub := st.Subscribe(func(id string) { got <- id })
		if err := st.Publish(ctx, "t1"); err != nil {
			t.Fatalf("Publish: %v", err)
		}
		select {
		case id := <-got:
			if id != "t1" {
				t.Errorf("subscriber got %q, want t1", id)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("subscriber got nothing within 5s")
		}
		unsub()
		if err := st.Publish(ctx, "t2"); err != nil {
			t.Fatalf("Publish: %v", err)
		}
		select {
		case id := <-got:
			t.Errorf("subscriber got %q after unsubscribing", id)
		case <-time.After(200 * time.Millisecond):
		}
	})
}

// sampleRecord returns a record with every field set.
func sampleRecord(id string, now time.Time) *mcp.TaskRecord {
	now = now.Round(time.Millisecond)
	return &mcp.TaskRecord{
		ID:            id,
		Owner:         "https://issuer.example alice",
		Tool:          "slow",
		Status:        mcp.TaskInputRequired,
		StatusMessage: "waiting",
		CreatedAt:     now,
		UpdatedAt:     now.Add(time.Second),
		TTL:           time.Hour,
		PollInterval:  500 * time.Millisecond,
		InputRequests: map[string]json.RawMessage{"confirm": json.RawMessage(`{"method":"elicitation/create","params":{"message":"Sure?"}}`)},
		Params:        json.RawMessage(`{"name":"slow","arguments":{}}`),
		Answers:       map[string]json.RawMessage{"name": json.RawMessage(`{"action":"accept","content":{"name":"Alice"}}`)},
		State:         json.RawMessage(`{"step":2}`),
		Runner:        "r1",
		LeaseUntil:    now.Add(30 * time.Second),
	}
}
