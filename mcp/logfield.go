package mcp

import "github.com/mcpkit/mcpkit/internal/clip"

// The bounds of log fields whose text comes from the network before it is
// validated (a method name, a token's subject, a verifier's or a legacy
// client's error), listed in docs/security.md: a client chooses their
// size, and a log line must not carry megabytes of it.
const (
	maxLogField = 256  // a name, a method, a subject
	maxLogError = 1024 // an error's text
)

// logField bounds a string for a log field (maxLogField bytes, valid
// UTF-8).
func logField(s string) string { return clip.String(s, maxLogField) }

// logError bounds an error's text for a log field (maxLogError bytes).
func logError(err error) string {
	if err == nil {
		return ""
	}
	return logText(err.Error())
}

// logText bounds the text of an error for a log field (maxLogError bytes).
func logText(s string) string { return clip.String(s, maxLogError) }
