package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// stream builds a `go test -json` stream from events.
func stream(t *testing.T, evs ...event) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		j, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

func out(pkg, test, text string) event {
	return event{Action: "output", Package: pkg, Test: test, Output: text}
}

func TestReport(t *testing.T) {
	const a, b, c = "github.com/mcpkit/mcpkit/a", "github.com/mcpkit/mcpkit/b", "github.com/mcpkit/mcpkit/c"
	tests := []struct {
		name       string
		in         string
		want       Record
		wantOut    []string // substrings the printed report must hold
		wantNotOut []string // and must not
	}{
		{
			name: "pass, skip with reason, subtests counted",
			in: stream(t,
				event{Action: "run", Package: a, Test: "TestOK"},
				out(a, "TestOK", "=== RUN   TestOK\n"),
				out(a, "TestOK", "    a_test.go:3: chatter of a passing test\n"),
				event{Action: "pass", Package: a, Test: "TestOK"},
				event{Action: "run", Package: a, Test: "TestOK/sub"},
				event{Action: "pass", Package: a, Test: "TestOK/sub"},
				out(a, "TestRedis", "=== RUN   TestRedis\n"),
				out(a, "TestRedis", "    redis_test.go:12: redis-server not on PATH\n"),
				out(a, "TestRedis", "--- SKIP: TestRedis (0.00s)\n"),
				event{Action: "skip", Package: a, Test: "TestRedis"},
				out(a, "", "ok  \tgithub.com/mcpkit/mcpkit/a\t0.1s\n"),
				event{Action: "pass", Package: a, Elapsed: 0.1},
				out(b, "", "?   \tgithub.com/mcpkit/mcpkit/b\t[no test files]\n"),
				event{Action: "skip", Package: b},
			),
			want: Record{Module: ".", Packages: 2, NoTests: 1, Passed: 2, Skipped: 1,
				Skips: []Skip{{Package: a, Test: "TestRedis", Reason: "redis-server not on PATH"}}},
			wantOut:    []string{"ok   github.com/mcpkit/mcpkit/a 100ms (2 passed, 1 skipped)"},
			wantNotOut: []string{"chatter of a passing test", "[no test files]"},
		},
		{
			name: "a failing test prints its output",
			in: stream(t,
				out(a, "TestBad", "=== RUN   TestBad\n"),
				out(a, "TestBad", "    a_test.go:9: got 1, want 2\n"),
				out(a, "TestBad", "--- FAIL: TestBad (0.00s)\n"),
				event{Action: "fail", Package: a, Test: "TestBad"},
				out(a, "", "FAIL\n"),
				event{Action: "fail", Package: a},
			),
			want:    Record{Module: ".", Packages: 1, Failed: 1, PackagesFailed: []string{a}},
			wantOut: []string{"FAIL github.com/mcpkit/mcpkit/a", "got 1, want 2"},
		},
		{
			name: "a build failure prints the compiler output",
			in: stream(t,
				event{Action: "build-output", ImportPath: c + " [" + c + ".test]", Output: "c/x.go:1:1: undefined: y\n"},
				event{Action: "build-fail", ImportPath: c + " [" + c + ".test]"},
				out(c, "", "FAIL\tgithub.com/mcpkit/mcpkit/c [build failed]\n"),
				event{Action: "fail", Package: c},
			),
			want:    Record{Module: ".", Packages: 1, PackagesFailed: []string{c}},
			wantOut: []string{"undefined: y", "[build failed]"},
		},
		{
			name: "a panic outside any test result is printed",
			in: stream(t,
				out(a, "", "panic: boom\n"),
				out(a, "", "FAIL\tgithub.com/mcpkit/mcpkit/a\t0.01s\n"),
				event{Action: "fail", Package: a},
			),
			want:    Record{Module: ".", Packages: 1, PackagesFailed: []string{a}},
			wantOut: []string{"panic: boom"},
		},
		{
			name: "a stream cut short fails the unfinished package",
			in: stream(t,
				out(a, "TestHang", "=== RUN   TestHang\n"),
			),
			want:    Record{Module: ".", Packages: 1, PackagesFailed: []string{a}},
			wantOut: []string{"the stream ended before"},
		},
		{
			name:    "plain text lines pass through",
			in:      "# github.com/mcpkit/mcpkit/a\nvet: a.go:1: bad\n",
			want:    Record{Module: ".", Garbled: 2},
			wantOut: []string{"vet: a.go:1: bad"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			rec, err := report(strings.NewReader(tt.in), &w, ".", false)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *rec, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
			for _, s := range tt.wantOut {
				if !strings.Contains(w.String(), s) {
					t.Errorf("report lacks %q:\n%s", s, w.String())
				}
			}
			for _, s := range tt.wantNotOut {
				if strings.Contains(w.String(), s) {
					t.Errorf("report holds %q:\n%s", s, w.String())
				}
			}
		})
	}
}

func TestSummary(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	recs := []*Record{
		{Module: ".", Packages: 3, NoTests: 1, Passed: 10, Skipped: 2, Skips: []Skip{
			{Package: "github.com/mcpkit/mcpkit", Test: "TestNginx", Reason: "nginx not on PATH"},
			{Package: "github.com/mcpkit/mcpkit/mcp", Test: "TestNginx2", Reason: "nginx not on PATH"},
		}},
		{Module: "redis", Packages: 1, Passed: 4, Failed: 1, PackagesFailed: []string{"github.com/mcpkit/mcpkit/redis"}},
	}
	for _, r := range recs {
		if err := appendRecord(state, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := readRecords(state)
	if err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	printSummary(&w, got)
	want := `go: 2 modules, 4 packages (1 without tests, 1 failed); tests: 14 ok, 1 failed, 2 skipped
  failed package: github.com/mcpkit/mcpkit/redis
  skipped 2: nginx not on PATH (mcpkit.TestNginx, mcp.TestNginx2)
`
	if diff := cmp.Diff(want, w.String()); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}
