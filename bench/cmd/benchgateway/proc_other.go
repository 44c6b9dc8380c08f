//go:build !unix

package main

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }

func kill(pid int) {}
