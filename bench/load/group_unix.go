//go:build unix

package load

import (
	"os/exec"
	"syscall"
)

// groupAttr puts a started process in its own process group.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// KillGroup ends the process group of cmd, started in one of its own (by
// StartLogged, or with GroupAttr): a peer's backend processes with it.
func KillGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// GroupAttr is the SysProcAttr that starts a process in its own group.
func GroupAttr() *syscall.SysProcAttr { return groupAttr() }
