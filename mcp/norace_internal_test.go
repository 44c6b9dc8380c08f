//go:build !race

package mcp

const raceOn = false
