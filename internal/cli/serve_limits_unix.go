//go:build unix

package cli

import "syscall"

// fileLimit returns the process's soft RLIMIT_NOFILE (which the Go
// runtime raises to the hard limit at start), or 0 if it cannot be read.
func fileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	v := uint64(r.Cur)
	if v >= 1<<62 { // RLIM_INFINITY, whatever its spelling on this system
		return 0
	}
	return v
}
