package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// This file decodes arbitrary JSON values (the _meta of a result) the way
// encoding/json decodes them into an any — map[string]any, []any, string,
// float64, bool, nil — without reflection. The input must be valid JSON
// (the caller checks it, or encoding/json did before calling an
// UnmarshalJSON method); nesting deeper than jsonscan.MaxDepth is an
// error, so that hostile input cannot exhaust the stack.

// Short strings that recur in every result (_meta keys such as
// io.modelcontextprotocol/serverInfo, the server's name and version) are
// interned: boxed into an any once and shared afterwards, which saves two
// allocations each. Strings are immutable, so sharing them is invisible to
// the caller. The table is bounded: once full it stops growing, so a
// hostile server cannot make it hold more than internMax strings of at most
// internMaxLen bytes.
const (
	internMax    = 512
	internMaxLen = 64
)

var intern struct {
	mu sync.RWMutex
	m  map[string]any // each value is the key, boxed
}

// internString returns raw (unescaped, valid UTF-8 bytes) as a boxed
// string, shared with earlier calls when raw is short.
func internString(raw []byte) any {
	if len(raw) > internMaxLen {
		return string(raw)
	}
	intern.mu.RLock()
	v, ok := intern.m[string(raw)]
	intern.mu.RUnlock()
	if ok {
		return v
	}
	s := string(raw)
	v = any(s)
	intern.mu.Lock()
	if intern.m == nil {
		intern.m = make(map[string]any)
	}
	if len(intern.m) < internMax {
		intern.m[s] = v
	}
	intern.mu.Unlock()
	return v
}

// plainString reports whether the bytes between a JSON string's quotes
// decode to themselves: no escape and valid UTF-8 (encoding/json replaces
// invalid bytes with U+FFFD).
func plainString(raw []byte) bool {
	return bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw)
}

// decodeString decodes a JSON string span as encoding/json does.
func decodeString(v []byte) (string, bool) {
	raw, ok := jsonscan.StringBytes(v)
	if !ok {
		return "", false
	}
	if plainString(raw) {
		return string(raw), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// decodeKey decodes a member's key, interned when short.
func decodeKey(m *jsonscan.Member) (string, error) {
	if !m.Escaped && utf8.Valid(m.Key) {
		return internString(m.Key).(string), nil
	}
	q := make([]byte, 0, len(m.Key)+2)
	q = append(append(append(q, '"'), m.Key...), '"')
	s, ok := decodeString(q)
	if !ok {
		return "", errors.New("a malformed member name")
	}
	return s, nil
}

var errTooDeep = errors.New("nested too deeply")

// decodeAny decodes the valid JSON value b into an any, as encoding/json
// does.
func decodeAny(b []byte, depth int) (any, error) {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) {
		return nil, errors.New("unexpected end of JSON input")
	}
	b = b[i:]
	switch b[0] {
	case '{':
		return decodeObject(b, depth+1)
	case '[':
		if depth+1 > jsonscan.MaxDepth {
			return nil, errTooDeep
		}
		var out []any
		j := 1
		for {
			j = jsonscan.SkipSpace(b, j)
			if j >= len(b) {
				return nil, errors.New("unexpected end of JSON input")
			}
			if b[j] == ']' {
				break
			}
			if b[j] == ',' {
				j++
				continue
			}
			end := jsonscan.SkipValue(b, j)
			v, err := decodeAny(b[j:end], depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			j = end
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	case '"':
		raw, ok := jsonscan.StringBytes(bytes.TrimRight(b, " \t\r\n"))
		if !ok {
			return nil, errors.New("a malformed string")
		}
		if plainString(raw) {
			return internString(raw), nil
		}
		s, ok := decodeString(bytes.TrimRight(b, " \t\r\n"))
		if !ok {
			return nil, errors.New("a malformed string")
		}
		return s, nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	}
	f, err := strconv.ParseFloat(string(bytes.TrimRight(b, " \t\r\n")), 64)
	if err != nil {
		return nil, errors.New("the number " + strconv.Quote(string(bytes.TrimRight(b, " \t\r\n"))) + " does not fit a float64")
	}
	return f, nil
}

// decodeObject decodes the valid JSON object b into a map (the last of
// repeated names wins, as with encoding/json).
func decodeObject(b []byte, depth int) (map[string]any, error) {
	if depth > jsonscan.MaxDepth {
		return nil, errTooDeep
	}
	it, ok := jsonscan.Object(b)
	if !ok {
		return nil, errors.New("not an object")
	}
	out := make(map[string]any)
	var m jsonscan.Member
	for it.Next(&m) {
		k, err := decodeKey(&m)
		if err != nil {
			return nil, err
		}
		v, err := decodeAny(m.Value, depth)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// decodeResultMeta decodes a _meta value: an object, or null for none.
func decodeResultMeta(b []byte) (Meta, error) {
	switch jsonscan.Kind(b) {
	case 'n':
		return nil, nil
	case '{':
		m, err := decodeObject(b, 1)
		if err != nil {
			return nil, err
		}
		return Meta(m), nil
	}
	return nil, errors.New("must be an object")
}
