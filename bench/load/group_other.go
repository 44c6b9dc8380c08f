//go:build !unix

package load

import (
	"os/exec"
	"syscall"
)

func groupAttr() *syscall.SysProcAttr { return nil }

// KillGroup kills cmd's process (process groups are a Unix idea).
func KillGroup(cmd *exec.Cmd) { cmd.Process.Kill() }

// GroupAttr is nil where processes have no groups.
func GroupAttr() *syscall.SysProcAttr { return nil }
