//go:build !linux

package load

import "os/exec"

// readStreams starts one reader goroutine per stream; they end when the
// streams are closed.
func readStreams(readers []*replicaReader, t *replicaTally) (stop func(), err error) {
	for _, rd := range readers {
		go rd.read(t)
	}
	return func() {}, nil
}

// killWithParent does nothing here: only Linux has a parent-death signal.
func killWithParent(cmd *exec.Cmd) {}
