package cli

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDidNotStart: a stdio server that exits before answering is reported as "did not
// start", with its exit status and its stderr, and exit code 8, by discover and by the other
// client commands.
func TestDidNotStart(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to stand in for a crashing server")
	}
	crash := []string{"--", "sh", "-c", "echo 'config: no such file' >&2; echo 'giving up' >&2; exit 3"}
	tests := []struct {
		name string
		args []string
		want []string // lines the output must hold, each as a whole line
	}{
		{"discover", append([]string{"discover", "--color", "never"}, crash...), []string{
			"mcpkit discover: did not start",
			"  the server exited with status 3 before it answered any request; its stderr ends with:",
			"    config: no such file",
			"    giving up",
		}},
		{"tools", append([]string{"tools"}, crash...), []string{
			"  config: no such file",
			"  giving up",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Run(tt.args, strings.NewReader(""), &out, &errOut, nil)
			if code != exitDidNotStart {
				t.Errorf("exit %d, want %d (did not start)", code, exitDidNotStart)
			}
			all := out.String() + errOut.String()
			lines := strings.Split(all, "\n")
			for _, w := range tt.want {
				found := false
				for _, l := range lines {
					if l == w {
						found = true
					}
				}
				if !found {
					t.Errorf("output lacks the line %q:\n%s", w, all)
				}
			}
			if !strings.Contains(all, "did not start") {
				t.Errorf("output does not say the server did not start:\n%s", all)
			}
		})
	}
}

// TestListLongKeys: a URI longer than the column gets a line of its own, and the other rows
// keep their alignment.
func TestListLongKeys(t *testing.T) {
	long := "file:///" + strings.Repeat("very-long-directory-name/", 4) + "report.txt"
	res := func(uri, name string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"uri": uri, "name": name})
		return b
	}
	var out bytes.Buffer
	p := &printer{w: &out}
	p.lists(&lists{Resources: []json.RawMessage{res("demo://a", "a"), res(long, "long"), res("demo://bb", "bb")}})
	got := out.String()
	want := "resources (3)\n" +
		"  demo://a   a\n" +
		"  " + long + "\n" +
		"             long\n" +
		"  demo://bb  bb\n"
	if !strings.Contains(got, want) {
		t.Errorf("resources list (-want +got):\n%s", cmp.Diff(want, got))
	}
}
