package mcp

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTaskTransitions walks every pair of statuses through moveTask: the
// seven edges of the table move the record, every other change (the 18
// others, a terminal status's included) is refused, counted and leaves the
// record as it was.
func TestTaskTransitions(t *testing.T) {
	all := []TaskStatus{TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled}
	want := map[[2]TaskStatus]bool{
		{TaskWorking, TaskInputRequired}:   true,
		{TaskInputRequired, TaskWorking}:   true,
		{TaskWorking, TaskCompleted}:       true,
		{TaskWorking, TaskFailed}:          true,
		{TaskWorking, TaskCancelled}:       true,
		{TaskInputRequired, TaskFailed}:    true,
		{TaskInputRequired, TaskCancelled}: true,
	}
	before := refusedTaskTransitions.Load()
	got := map[[2]TaskStatus]bool{}
	refused := 0
	for _, from := range all {
		for _, to := range all {
			rec := &TaskRecord{ID: "t1", Status: from, StatusMessage: "m"}
			err := moveTask(rec, to)
			if err == nil {
				got[[2]TaskStatus{from, to}] = true
				if rec.Status != to {
					t.Errorf("%s -> %s: allowed but the status is %s", from, to, rec.Status)
				}
				continue
			}
			refused++
			if !errors.Is(err, errTaskTransition) {
				t.Errorf("%s -> %s: error %v is not errTaskTransition", from, to, err)
			}
			if diff := cmp.Diff(&TaskRecord{ID: "t1", Status: from, StatusMessage: "m"}, rec); diff != "" {
				t.Errorf("%s -> %s: a refused change altered the record (-want +got):\n%s", from, to, diff)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("allowed edges (-want +got):\n%s", diff)
	}
	if refused != 18 {
		t.Errorf("%d changes refused, want 18", refused)
	}
	if n := refusedTaskTransitions.Load() - before; n != int64(refused) {
		t.Errorf("refusedTaskTransitions grew by %d, want %d", n, refused)
	}
	for _, st := range all {
		if st.Terminal() && len(taskTransitions[st]) > 0 {
			t.Errorf("terminal status %s has edges %v", st, taskTransitions[st])
		}
	}
}
