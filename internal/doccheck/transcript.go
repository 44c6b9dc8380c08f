package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Step is one command of a console transcript and what it printed.
type Step struct {
	Cmd string // the command, without the "$ " prompt
	Out string // its output, each line ending in "\n"
}

// ParseTranscript splits a console block into its steps: a line starting with "$ " is a
// command, the lines up to the next command its output.
func ParseTranscript(text string) ([]Step, error) {
	var steps []Step
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			steps = append(steps, Step{Cmd: strings.TrimSuffix(cmd, "\n")})
			continue
		}
		if len(steps) == 0 {
			return nil, fmt.Errorf("output before the first command: %q", line)
		}
		if !strings.HasSuffix(line, "\n") {
			line += "\n"
		}
		steps[len(steps)-1].Out += line
	}
	return steps, nil
}

// Render is the console block of steps.
func Render(steps []Step) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteString("$ " + s.Cmd + "\n")
		b.WriteString(s.Out)
	}
	return b.String()
}

var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	// Dates and times first: they hold colons that look like ports.
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`), "DATE"},
	{regexp.MustCompile(`\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}`), "DATE"},
	{regexp.MustCompile(`((?:127\.0\.0\.1|localhost|\[::1\]):)\d+`), "${1}PORT"},
	{regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m)\b`), "DURATION"},
	{regexp.MustCompile(`\bpid \d+`), "pid PID"},
	{regexp.MustCompile(`("latencyMs": )[\d.]+`), "${1}DURATION"},
	{regexp.MustCompile(`(sessionid=|Mcp-Session-Id: ?)[A-Za-z0-9_-]+`), "${1}SESSION"},
	{regexp.MustCompile(`[ \t]+\n`), "\n"},
}

// Normalize replaces what changes from run to run (ports of loopback addresses, latencies and
// other durations, dates, process ids) by placeholders, so that two runs compare equal. Column
// padding after a replaced value is kept as it is: compare normalized texts, not raw ones.
func Normalize(s string) string {
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	// Columns padded to the width of a value that changed: squeeze runs of spaces.
	return regexp.MustCompile(` {2,}`).ReplaceAllString(s, "  ")
}

// Rewrite replaces the text of block b (found again by its line) in its file under root.
func Rewrite(root string, b Block, text string) error {
	path := filepath.Join(root, b.File)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(data), "\n")
	start := b.Line // index of the first content line (b.Line is 1-based: the fence)
	end := start + strings.Count(b.Text, "\n")
	if end > len(lines) {
		return fmt.Errorf("%s: the block moved; run the test again", b)
	}
	out := strings.Join(lines[:start], "") + text + strings.Join(lines[end:], "")
	return os.WriteFile(path, []byte(out), 0o644)
}
