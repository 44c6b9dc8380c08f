// Package testkey is the seam through which mcptest gives the servers it
// tests a fixed requestState key, without a public option for it: package
// mcp sets Use when it is initialized.
package testkey

// Use gives the *mcp.Server s the fixed test key for sealing requestState
// when it has none configured and has not sealed anything yet, quietly. It
// is set by package mcp and is safe for concurrent use.
var Use func(s any)
