package load

import (
	"bufio"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// StartLogged starts name args in a process group of its own (see
// KillGroup) and returns the URL of the first url= field of its log
// (stderr), as mcpkit serve, bridge and gateway log it; after timeout
// without one, it kills the process and fails.
func StartLogged(timeout time.Duration, name string, args ...string) (string, *exec.Cmd, error) {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = groupAttr()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "url="); ok {
				select {
				case found <- strings.Trim(strings.Fields(u)[0], `"`):
				default:
				}
			}
		}
	}()
	select {
	case u := <-found:
		return u, cmd, nil
	case <-time.After(timeout):
		cmd.Process.Kill()
		cmd.Wait()
		return "", nil, fmt.Errorf("%s %s logged no url= line within %s", name, strings.Join(args, " "), timeout)
	}
}

// Median returns the median of v (the mean of the middle two for an even
// count), 0 for none. v is not modified.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
