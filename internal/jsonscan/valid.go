package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// MaxDepth is the deepest nesting of arrays and objects that Valid accepts.
// Deeper input is rejected, so that hostile messages cannot exhaust the
// stack of anything that later decodes them.
const MaxDepth = 128

// strSafe marks the bytes that need no attention inside a JSON string.
var strSafe = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainEnd returns the index of the first byte at or after i that is not
// plain string content: a quote, a backslash or a control character (below
// 0x20), or len(b) when there is none. It looks at eight bytes at a time.
func plainEnd(b []byte, i int) int {
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		// Each term flags the bytes of one kind (below 0x20, equal to
		// '"', equal to '\\'); a borrow can only flag bytes above the
		// first true one, so the lowest flag is exact. The high bit of
		// x^'"' and of x^'\\' is that of x, so one &^x serves all three.
		q := x ^ ('"' * lsb)
		s := x ^ ('\\' * lsb)
		if m := ((x - 0x20*lsb) | (q - lsb) | (s - lsb)) &^ x & msb; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for i < len(b) && strSafe[b[i]] {
		i++
	}
	return i
}

// Valid reports whether b is exactly one valid JSON value (with optional
// surrounding space) nested at most MaxDepth deep. It does not allocate.
func Valid(b []byte) bool {
	i, ok := validValue(b, SkipSpace(b, 0), 0)
	return ok && SkipSpace(b, i) == len(b)
}

// TooDeep reports whether b nests arrays and objects deeper than MaxDepth;
// it tells a nesting violation from a syntax error after Valid failed.
func TooDeep(b []byte) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = skipString(b, i) - 1
		case '{', '[':
			depth++
			if depth > MaxDepth {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

func validValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return validString(b, i)
	case c == '{':
		if depth >= MaxDepth {
			return i, false
		}
		i = SkipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			var ok bool
			if i, ok = validString(b, i); !ok {
				return i, false
			}
			i = SkipSpace(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			if i, ok = validValue(b, SkipSpace(b, i+1), depth+1); !ok {
				return i, false
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == '}' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = SkipSpace(b, i+1)
		}
	case c == '[':
		if depth >= MaxDepth {
			return i, false
		}
		i = SkipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = validValue(b, i, depth+1); !ok {
				return i, false
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == ']' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = SkipSpace(b, i+1)
		}
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return validNumber(b, i)
	}
	return i, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

func validString(b []byte, i int) (int, bool) {
	i, _, ok := validStringEsc(b, i)
	return i, ok
}

// validStringEsc is validString that also reports whether the string has
// a backslash escape.
func validStringEsc(b []byte, i int) (end int, esc, ok bool) {
	i++
	for {
		i = plainEnd(b, i)
		if i >= len(b) {
			return i, esc, false
		}
		switch b[i] {
		case '"':
			return i + 1, esc, true
		case '\\':
			esc = true
			if i+1 >= len(b) {
				return i, esc, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return i, esc, false
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return i, esc, false
					}
				}
				i += 6
			default:
				return i, esc, false
			}
		default: // a control character
			return i, esc, false
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, false
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	} else {
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	return i, true
}

// Checked walks the members of a top-level JSON object while validating
// the whole text, so that one pass both checks and reads a message. Use
// Next until it returns false, then Valid to learn whether all of b was one
// valid object. NextKey, Value, Enter and Leave walk an object value in
// place, validating it as it is walked.
type Checked struct {
	b      []byte
	i      int
	depth  int // nesting depth of this object: 0 for the top level
	state  int // 0 before the first member, 1 after a member, 2 done ok, 3 invalid, 4 key read, value pending
	nested bool
	end    int // after the closing brace, once a nested walk is done
}

// CheckObject starts a validating walk over b, which should hold one JSON
// object.
func CheckObject(b []byte) Checked {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return Checked{state: 3}
	}
	return Checked{b: b, i: i + 1}
}

// Next advances to the next member, reporting false at the end of the
// object or at the first syntax error.
func (c *Checked) Next(m *Member) bool {
	if !c.NextKey(m) {
		return false
	}
	v, ok := c.Value()
	m.Value = v
	return ok
}

// NextKey advances to the next member and sets m.Key and m.Escaped (and
// clears m.Value), reporting false at the end of the object or at the first
// syntax error. Follow it with Value, or with Enter; a value left pending
// is validated by the next call to NextKey.
func (c *Checked) NextKey(m *Member) bool {
	if c.state == 4 {
		if _, ok := c.Value(); !ok {
			return false
		}
	}
	if c.state >= 2 {
		return false
	}
	b, i := c.b, SkipSpace(c.b, c.i)
	if i >= len(b) {
		c.state = 3
		return false
	}
	if c.state == 1 {
		if b[i] == '}' {
			c.finish(i + 1)
			return false
		}
		if b[i] != ',' {
			c.state = 3
			return false
		}
		i = SkipSpace(b, i+1)
	} else if b[i] == '}' {
		c.finish(i + 1)
		return false
	}
	if i >= len(b) || b[i] != '"' {
		c.state = 3
		return false
	}
	kend, esc, ok := validStringEsc(b, i)
	if !ok {
		c.state = 3
		return false
	}
	m.Key = b[i+1 : kend-1]
	m.Escaped = esc
	m.Value = nil
	i = SkipSpace(b, kend)
	if i >= len(b) || b[i] != ':' {
		c.state = 3
		return false
	}
	c.i, c.state = SkipSpace(b, i+1), 4
	return true
}

// Value validates the value of the member NextKey returned, moves past it
// and returns its span; false means a syntax error, and ends the walk.
func (c *Checked) Value() ([]byte, bool) {
	if c.state != 4 {
		return nil, false
	}
	i := c.i
	vend, ok := validValue(c.b, i, c.depth+1)
	if !ok {
		c.state = 3
		return nil, false
	}
	c.i, c.state = vend, 1
	return c.b[i:vend], true
}

// Enter returns a validating walk over the value of the member NextKey
// returned, and false (consuming nothing) when that value is not an object
// or would nest deeper than MaxDepth; call Value then. Walk the inner
// object with Next or NextKey until they report false, then call Leave.
func (c *Checked) Enter() (Checked, bool) {
	if c.state != 4 || c.i >= len(c.b) || c.b[c.i] != '{' || c.depth+1 >= MaxDepth {
		return Checked{state: 3}, false
	}
	return Checked{b: c.b, i: c.i + 1, depth: c.depth + 1, nested: true}, true
}

// Leave resumes the walk after the object value that inner, from Enter,
// walked, and returns that value's span. The walk becomes invalid (and
// Leave returns false) unless inner ended at a valid closing brace.
func (c *Checked) Leave(inner *Checked) ([]byte, bool) {
	if c.state != 4 || inner.state != 2 || !inner.nested {
		c.state = 3
		return nil, false
	}
	start := c.i
	c.i, c.state = inner.end, 1
	return c.b[start:inner.end], true
}

func (c *Checked) finish(i int) {
	if c.nested {
		c.state, c.end = 2, i
		return
	}
	if SkipSpace(c.b, i) == len(c.b) {
		c.state = 2
	} else {
		c.state = 3
	}
}

// Valid reports whether the walk ended at the end of one valid object (for
// a walk from Enter: at its closing brace). Call it after Next returned
// false.
func (c *Checked) Valid() bool { return c.state == 2 }
