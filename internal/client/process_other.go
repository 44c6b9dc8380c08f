//go:build !unix

package client

import "os/exec"

func setProcessGroup(cmd *exec.Cmd) {}

// terminate ends the server process; there are no signals to ask with.
func terminate(cmd *exec.Cmd) { cmd.Process.Kill() }

func kill(cmd *exec.Cmd) { cmd.Process.Kill() }

// groupAlive reports false: without process groups, only the process
// itself is ended.
func groupAlive(cmd *exec.Cmd) bool { return false }
