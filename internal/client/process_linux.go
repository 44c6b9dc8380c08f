package client

import (
	"os"
	"syscall"
)

// sysPidfdOpen is pidfd_open(2)'s number, the same on every Linux
// architecture (the syscall package predates it).
const sysPidfdOpen = 434

// awaitExit waits, in the runtime's poller, until process pid has exited,
// so that the Wait that follows returns at once: a process waited for in
// Wait would hold an OS thread (and its signal stack) all its life, one
// per stdio server. Where a pidfd cannot be polled it returns at once and
// Wait blocks as before.
func awaitExit(pid int) {
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), uintptr(syscall.O_NONBLOCK), 0)
	if errno != 0 {
		return
	}
	f := os.NewFile(fd, "pidfd") // non-blocking: registered with the poller
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	polled := false
	rc.Read(func(uintptr) bool {
		// The first call asks the poller to wait for readability (the
		// process exited); the second returns.
		done := polled
		polled = true
		return done
	})
}
