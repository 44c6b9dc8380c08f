package skills_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/skills"
)

func TestWatch(t *testing.T) {
	root := t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one/SKILL.md", manifest("one", "first"))
	fsys := os.DirFS(root)
	start, err := skills.Load(fsys, nil)
	if err != nil {
		t.Fatal(err)
	}

	synctest.Test(t, func(t *testing.T) {
		type event struct {
			set *skills.Set
			err error
		}
		events := make(chan event, 10)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			skills.Watch(ctx, fsys, nil, time.Second, start, func(s *skills.Set, err error) { events <- event{s, err} })
			close(done)
		}()
		next := func(what string) event {
			t.Helper()
			time.Sleep(time.Second)
			synctest.Wait()
			select {
			case e := <-events:
				return e
			default:
				t.Fatalf("%s: no change reported", what)
			}
			return event{}
		}
		quiet := func(what string) {
			t.Helper()
			time.Sleep(time.Second)
			synctest.Wait()
			select {
			case e := <-events:
				t.Fatalf("%s: change reported: %v", what, e)
			default:
			}
		}

		quiet("nothing changed")

		write("two/SKILL.md", manifest("two", "second"))
		if e := next("a skill added"); e.err != nil || len(e.set.Skills()) != 2 {
			t.Fatalf("after adding: %v, %v", e.set, e.err)
		}
		quiet("nothing changed again")

		write("two/notes.txt", "notes")
		e := next("a file added")
		if f := e.set.File("skill://two/notes.txt"); f == nil || f.Digest != skills.Digest([]byte("notes")) {
			t.Fatalf("notes.txt = %+v", f)
		}

		write("two/SKILL.md", manifest("wrong", "second"))
		e = next("a skill broken")
		if !errors.Is(e.err, skills.ErrNameMismatch) || len(e.set.Skills()) != 1 {
			t.Fatalf("after breaking: %v, %v", e.set, e.err)
		}

		if err := os.RemoveAll(filepath.Join(root, "two")); err != nil {
			t.Fatal(err)
		}
		// The skills served are the same as while it was broken: no change.
		quiet("a broken skill removed")

		write("one/SKILL.md", manifest("one", "changed"))
		if e := next("a description changed"); e.err != nil || e.set.Skills()[0].Description != "changed" {
			t.Fatalf("after changing: %v, %v", e.set, e.err)
		}

		cancel()
		<-done
	})
}
