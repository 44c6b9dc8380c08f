// Package jsonscan walks JSON text that is already known to be valid
// (json.Valid) without building values: it finds object members and the
// byte spans of their values. It exists so the request hot path can read the
// JSON-RPC envelope and the MCP _meta block without allocating.
package jsonscan

import (
	"bytes"
	"encoding/json"
)

// SkipSpace returns the index of the first non-space byte at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// SkipValue returns the index just past the JSON value starting at i (after
// leading space). b must be valid JSON (see Valid).
func SkipValue(b []byte, i int) int {
	i = SkipSpace(b, i)
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// scanString is skipString that also reports whether the string has escapes.
func scanString(b []byte, i int) (int, bool) {
	i++ // opening quote
	esc := false
	for i < len(b) {
		i = plainEnd(b, i)
		if i >= len(b) {
			return i, esc
		}
		switch b[i] {
		case '\\':
			i += 2
			esc = true
		case '"':
			return i + 1, esc
		default:
			i++
		}
	}
	return i, esc
}

func skipString(b []byte, i int) int {
	i++ // opening quote
	for i < len(b) {
		i = plainEnd(b, i)
		if i >= len(b) {
			return i
		}
		switch b[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1
		default:
			i++
		}
	}
	return i
}

// Member is one member of a JSON object: the raw key (without quotes, still
// escaped) and the raw value span.
type Member struct {
	Key     []byte
	Escaped bool // the key contains a backslash escape
	Value   []byte
}

// KeyIs reports whether the member's key equals name, decoding escapes when
// the key has any.
func (m *Member) KeyIs(name string) bool {
	if !m.Escaped {
		return string(m.Key) == name
	}
	var s string
	q := make([]byte, 0, len(m.Key)+2)
	q = append(append(append(q, '"'), m.Key...), '"')
	if json.Unmarshal(q, &s) != nil {
		return false
	}
	return s == name
}

// Iter walks the members of one JSON object. The zero Iter is empty.
type Iter struct {
	b       []byte
	i       int
	end     int // after the closing brace, once done
	done    bool
	pending bool // NextKey returned a member whose value is not consumed yet
}

// Offset returns the iterator's position in the bytes it walks: after
// NextKey, where the member's value starts; after Leave, just past the
// object that was entered.
func (it *Iter) Offset() int { return it.i }

// Object returns an iterator over the members of the object that b holds
// (after optional leading space), and false if b is not an object. b must be
// valid JSON.
func Object(b []byte) (Iter, bool) {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return Iter{done: true}, false
	}
	return Iter{b: b, i: i + 1}, true
}

// Next advances to the next member and reports whether there was one.
func (it *Iter) Next(m *Member) bool {
	if !it.NextKey(m) {
		return false
	}
	m.Value = it.Value()
	return true
}

// NextKey advances to the next member and sets m.Key and m.Escaped but not
// m.Value: follow it with Value, to read the value's span, or with Enter, to
// walk an object value in place without a separate pass over it.
func (it *Iter) NextKey(m *Member) bool {
	if it.pending {
		it.Value()
	}
	if it.done {
		return false
	}
	b := it.b
	i := it.i
	for {
		i = SkipSpace(b, i)
		if i >= len(b) || b[i] == '}' {
			it.done = true
			it.end = min(i+1, len(b))
			return false
		}
		if b[i] == ',' {
			i++
			continue
		}
		break
	}
	end, esc := scanString(b, i)
	m.Key = b[i+1 : end-1]
	m.Escaped = esc
	m.Value = nil
	i = SkipSpace(b, end)
	i++ // colon
	it.i = SkipSpace(b, i)
	it.pending = true
	return true
}

// Value returns the span of the value of the member NextKey returned, and
// moves past it.
func (it *Iter) Value() []byte {
	vend := SkipValue(it.b, it.i)
	v := it.b[it.i:vend]
	it.i, it.pending = vend, false
	return v
}

// Enter returns an iterator over the value of the member NextKey returned,
// and false (consuming nothing) when that value is not an object. Walk the
// inner iterator to its end, then call Leave.
func (it *Iter) Enter() (Iter, bool) {
	if it.i >= len(it.b) || it.b[it.i] != '{' {
		return Iter{done: true}, false
	}
	return Iter{b: it.b, i: it.i + 1}, true
}

// Leave resumes the iterator after the object that inner, from Enter,
// walked.
func (it *Iter) Leave(inner *Iter) {
	if !inner.done {
		it.Value()
		return
	}
	it.i, it.pending = inner.end, false
}

// Lookup returns the value of the member of object b named name. When the
// name repeats, the last one wins, as with encoding/json.
func Lookup(b []byte, name string) (v []byte, found bool) {
	it, ok := Object(b)
	if !ok {
		return nil, false
	}
	var m Member
	for it.Next(&m) {
		if m.KeyIs(name) {
			v, found = m.Value, true
		}
	}
	return v, found
}

// Kind returns the first byte of a JSON value span ('{', '[', '"', 't', 'f',
// 'n', or a digit or '-' for numbers), or 0 for an empty span.
func Kind(v []byte) byte {
	i := SkipSpace(v, 0)
	if i >= len(v) {
		return 0
	}
	return v[i]
}

// IsObject reports whether the span holds a JSON object.
func IsObject(v []byte) bool { return Kind(v) == '{' }

// String returns the decoded value of a JSON string span and true, or false
// if v is not a string. It allocates only when the string has escapes.
func String(v []byte) (string, bool) {
	raw, ok := StringBytes(v)
	if !ok {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// StringBytes returns the raw (still escaped) bytes between the quotes of a
// JSON string span, or false if v is not a string.
func StringBytes(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	return v[1 : len(v)-1], true
}

// StringEqual reports whether the JSON string span v decodes to s, without
// allocating when v has no escapes.
func StringEqual(v []byte, s string) bool {
	raw, ok := StringBytes(v)
	if !ok {
		return false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == s
	}
	d, ok := String(v)
	return ok && d == s
}

// IsEmptyObject reports whether v is `{}` (with optional space).
func IsEmptyObject(v []byte) bool {
	i := SkipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return false
	}
	i = SkipSpace(v, i+1)
	return i < len(v) && v[i] == '}'
}
