package wire

import "encoding/json"

// AppendString appends s as a JSON string. Characters that are unsafe in
// HTML are escaped as encoding/json does, and invalid UTF-8 is replaced.
// It does not allocate for a string that needs no escapes.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// ValidID reports whether b (a valid JSON value) is a string or an integer
// without fraction or exponent: what a JSON-RPC id may be in MCP.
func ValidID(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if b[0] == '"' {
		return true
	}
	i := 0
	if b[0] == '-' {
		i++
	}
	if i == len(b) {
		return false
	}
	for ; i < len(b); i++ {
		if b[i] < '0' || b[i] > '9' {
			return false
		}
	}
	return true
}
