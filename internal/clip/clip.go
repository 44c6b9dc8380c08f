// Package clip bounds strings that come from the network before they reach
// logs, trace attributes and metric labels: a client (or a server, seen
// from the client) chooses them, so their size is the peer's to choose.
package clip

import "unicode/utf8"

// Ellipsis ends a string that String shortened.
const Ellipsis = "…"

// String returns s when it is valid UTF-8 of at most max bytes, and
// otherwise a valid UTF-8 string of at most max bytes: s with each invalid
// byte replaced by U+FFFD and, when that is longer than max, cut at a rune
// boundary and ended with Ellipsis (when max leaves room for it). It reads
// at most about max bytes of s and never allocates for a string that
// fits. A max of zero or less returns "". It is safe for concurrent use.
func String(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if len(s) <= max && utf8.ValidString(s) {
		return s
	}
	limit := max // the bytes the runes may take
	if validLen(s, max) > max {
		limit = max - len(Ellipsis)
		if limit < 0 {
			limit = max // no room for the ellipsis: cut only
		}
	}
	b := make([]byte, 0, max)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if len(b)+utf8.RuneLen(r) > limit {
			break
		}
		b = utf8.AppendRune(b, r) // an invalid byte decodes as U+FFFD
		i += n
	}
	if limit < max {
		b = append(b, Ellipsis...)
	}
	return string(b)
}

// validLen is the length of s once its invalid bytes are replaced by
// U+FFFD, as String writes it, or some length past max when that is more.
func validLen(s string, max int) int {
	n := 0
	for i := 0; i < len(s) && n <= max; {
		r, size := utf8.DecodeRuneInString(s[i:])
		n += utf8.RuneLen(r)
		i += size
	}
	return n
}
