//go:build race

package mcp

// raceOn reports whether the race detector is on: it changes allocation
// sizes (the mcp_test package has raceEnabled for the same).
const raceOn = true
