package mcptest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestSessionStore checks that a SessionStore implementation behaves as mcp
// expects: states round-trip without loss, a later Store replaces an
// earlier one, Delete ends a session, and a session neither loaded nor
// stored for the idle timeout expires while one in use does not. newStore
// returns an empty store whose sessions expire after idle; several stores
// it returns for one test must not share sessions (a Redis store, for
// example, gets a fresh key prefix). It is the same suite mcp's memory
// store and the Redis store pass:
//
//	func TestMyStore(t *testing.T) {
//		mcptest.TestSessionStore(t, func(t *testing.T, idle time.Duration) mcp.SessionStore {
//			return newMyStore(t, idle)
//		})
//	}
func TestSessionStore(t *testing.T, newStore func(t *testing.T, idle time.Duration) mcp.SessionStore) {
	ctx := context.Background()
	sample := func() *mcp.SessionState {
		return &mcp.SessionState{
			ProtocolVersion:    "2025-11-25",
			ClientInfo:         mcp.Implementation{Name: "client", Version: "1.2.3"},
			ClientCapabilities: mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}, Roots: &mcp.RootsCapability{ListChanged: true}},
			LogLevel:           mcp.LevelWarning,
			Subscriptions:      []string{"test://a", "test://b"},
			Owner:              "alice",
		}
	}
	t.Run("RoundTrip", func(t *testing.T) {
		st := newStore(t, time.Hour)
		want := sample()
		if err := st.Store(ctx, "s1", want); err != nil {
			t.Fatalf("Store: %v", err)
		}
		got, err := st.Load(ctx, "s1")
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if diff := cmp.Diff(sample(), got); diff != "" {
			t.Errorf("Load after Store (-want +got):\n%s", diff)
		}
		if _, err := st.Load(ctx, "other"); !errors.Is(err, mcp.ErrSessionNotFound) {
			t.Errorf("Load of an unknown id = %v, want ErrSessionNotFound", err)
		}
	})
	t.Run("Replace", func(t *testing.T) {
		st := newStore(t, time.Hour)
		first := sample()
		if err := st.Store(ctx, "s1", first); err != nil {
			t.Fatalf("Store: %v", err)
		}
		next := sample()
		next.LogLevel = mcp.LevelDebug
		next.Subscriptions = nil
		if err := st.Store(ctx, "s1", next); err != nil {
			t.Fatalf("second Store: %v", err)
		}
		got, err := st.Load(ctx, "s1")
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if got.LogLevel != mcp.LevelDebug || len(got.Subscriptions) != 0 {
			t.Errorf("Load after a second Store = %+v, want the second state", got)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		st := newStore(t, time.Hour)
		if err := st.Store(ctx, "s1", sample()); err != nil {
			t.Fatalf("Store: %v", err)
		}
		if err := st.Delete(ctx, "s1"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if _, err := st.Load(ctx, "s1"); !errors.Is(err, mcp.ErrSessionNotFound) {
			t.Errorf("Load after Delete = %v, want ErrSessionNotFound", err)
		}
		if err := st.Delete(ctx, "never"); err != nil {
			t.Errorf("Delete of an unknown id = %v, want nil", err)
		}
	})
	t.Run("Expiry", func(t *testing.T) {
		const idle = time.Second
		st := newStore(t, idle)
		for _, id := range []string{"used", "idle"} {
			if err := st.Store(ctx, id, sample()); err != nil {
				t.Fatalf("Store: %v", err)
			}
		}
		// "used" is loaded every idle/4, which keeps it; "idle" is not.
		deadline := time.Now().Add(2 * idle)
		for time.Now().Before(deadline) {
			time.Sleep(idle / 4)
			if _, err := st.Load(ctx, "used"); err != nil {
				t.Fatalf("Load of a session in use: %v", err)
			}
		}
		if _, err := st.Load(ctx, "idle"); !errors.Is(err, mcp.ErrSessionNotFound) {
			t.Errorf("Load of a session idle for twice the timeout = %v, want ErrSessionNotFound", err)
		}
	})
}
