//go:build !linux

package client

// awaitExit returns at once: Wait blocks for the process's exit.
func awaitExit(pid int) {}
