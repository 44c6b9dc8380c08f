//go:build unix

package main

import "syscall"

// procAttr puts a target in its own process group.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// kill ends a target's process group (a peer's backend with it).
func kill(pid int) { syscall.Kill(-pid, syscall.SIGKILL) }
