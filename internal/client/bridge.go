package client

// SessionOf returns the Session behind a public *client.Client (package
// github.com/mcpkit/mcpkit/client sets it), or nil for anything else. It
// lets the command line's spec checks reach the raw connection without
// making it public API.
var SessionOf func(v any) *Session
