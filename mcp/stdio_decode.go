package mcp

import (
	"bytes"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// maxCachedLine bounds the requests a decodeCache remembers: longer ones
// are decoded every time (copying them would cost more than it saves).
const maxCachedLine = 4 << 10

// decodeCache remembers the last request decoded on a stdio connection, so
// that a request that differs from it only in its id is decoded by
// comparing bytes instead of scanning them. Clients send the same _meta and
// params again and again (every modern request carries the protocol
// version, the client's identity and capabilities), so that most requests
// of a connection are the previous one with the next id. Only the reading
// goroutine uses it.
//
// The shortcut is exact: when a line is the remembered one with the bytes
// of the id's value replaced by another JSON integer or string without
// escapes, decoding it gives what decoding the remembered one gave, with
// the new id, because the rest of the text is the same and a scalar value
// stands where a scalar value stood. FuzzStdioDecodeCache checks it against
// decoding from scratch.
type decodeCache struct {
	line           []byte // a copy of the request, or nil
	idStart, idEnd int    // the span of the id's value in line
	msg            jsonrpc.Message
	mv             metaVisitor // finished; no _meta error
}

// decode decodes line as decodeVisit does, with mv collecting the _meta of
// params and finished, through the cache. msg and mv point into line.
func (dc *decodeCache) decode(line []byte, msg *jsonrpc.Message, mv *metaVisitor) *jsonrpc.Error {
	if dc.hit(line, msg, mv) {
		return nil
	}
	*mv = metaVisitor{}
	var derr *jsonrpc.Error
	*msg, derr = decodeVisit(line, mv.visit)
	if derr != nil {
		return derr
	}
	mv.finish(msg.Params)
	dc.store(line, msg, mv)
	return nil
}

// hit answers line from the remembered request when line is that request
// with another id: it sets msg and mv to the remembered ones moved onto
// line.
func (dc *decodeCache) hit(line []byte, msg *jsonrpc.Message, mv *metaVisitor) bool {
	old := dc.line
	if old == nil {
		return false
	}
	pre, suf := old[:dc.idStart], old[dc.idEnd:]
	if len(line) <= len(pre)+len(suf) || !bytes.HasPrefix(line, pre) || !bytes.HasSuffix(line, suf) {
		return false
	}
	rawID := line[len(pre) : len(line)-len(suf)]
	if !plainID(rawID) {
		return false
	}
	id, ok := jsonrpc.RawID(rawID)
	if !ok {
		return false
	}
	m, v := dc.msg, dc.mv
	shift := len(rawID) - (dc.idEnd - dc.idStart)
	if !moveSpans(&m, &v, old, line, func(off, n int) (int, bool) {
		switch {
		case off >= dc.idEnd:
			return off + shift, true
		case off+n <= dc.idStart:
			return off, true
		}
		return 0, false // the id itself, or a span around it
	}) {
		return false
	}
	m.ID = id
	*msg, *mv = m, v
	return true
}

// store remembers line, a request that decoded into msg and mv, when it
// can answer later lines: a request with an id whose _meta (if any) is
// well formed, and not too long.
func (dc *decodeCache) store(line []byte, msg *jsonrpc.Message, mv *metaVisitor) {
	rawID := msg.ID.Raw()
	if !msg.IsRequest() || mv.err != nil || len(line) > maxCachedLine || !plainID(rawID) {
		return
	}
	start, ok := spanOffset(line, rawID)
	if !ok {
		return
	}
	keep := append(dc.line[:0], line...)
	m, v := *msg, *mv
	if !moveSpans(&m, &v, line, keep, func(off, n int) (int, bool) { return off, true }) {
		return
	}
	dc.line, dc.idStart, dc.idEnd = keep, start, start+len(rawID)
	dc.msg, dc.mv = m, v
	dc.msg.ID = jsonrpc.ID{} // set on every hit
}

// plainID reports whether b is a JSON integer (-?(0|[1-9][0-9]*)) or a JSON
// string without escapes and control characters: a token that ends where
// it ends whatever follows, and needs no unescaping.
func plainID(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if b[0] == '"' {
		if len(b) < 2 || b[len(b)-1] != '"' {
			return false
		}
		for _, c := range b[1 : len(b)-1] {
			if c < 0x20 || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	i := 0
	if b[0] == '-' {
		i++
	}
	if i == len(b) || (b[i] == '0' && i+1 != len(b)) {
		return false
	}
	for ; i < len(b); i++ {
		if b[i] < '0' || b[i] > '9' {
			return false
		}
	}
	return true
}

// spanOffset returns the offset of b in from, when b is a non-empty
// subslice of from.
func spanOffset(from, b []byte) (int, bool) {
	off := cap(from) - cap(b)
	if len(b) == 0 || off < 0 || off+len(b) > len(from) || &from[off] != &b[0] {
		return 0, false
	}
	return off, true
}

// moveSpans moves what msg and mv, decoded from from, hold into from onto
// to: the span at offset off of from, n bytes long, becomes the span at
// where(off, n) of to. It reports false, leaving msg and mv unchanged, when
// a span is not inside from or where refuses it. mv must be finished; what
// finish leaves besides rm and err is dropped (nothing reads it again).
// Every span reqMeta holds must be moved here (TestStdioCallOwnsSpans
// checks that none is left behind).
func moveSpans(msg *jsonrpc.Message, mv *metaVisitor, from, to []byte, where func(off, n int) (int, bool)) bool {
	ok := true
	move := func(b []byte) []byte {
		if b == nil || !ok {
			return b
		}
		off, in := spanOffset(from, b)
		if in {
			off, in = where(off, len(b))
		}
		if !in || off < 0 || off+len(b) > len(to) {
			ok = false
			return b
		}
		return to[off : off+len(b)]
	}
	id := move(msg.ID.Raw())
	params, result := move(msg.Params), move(msg.Result)
	rm := mv.rm
	rm.version, rm.caps, rm.clientInfo = move(rm.version), move(rm.caps), move(rm.clientInfo)
	rm.logLevel, rm.progressToken = move(rm.logLevel), move(rm.progressToken)
	rm.p.src = move(rm.p.src)
	if !ok {
		return false
	}
	if id != nil {
		msg.ID, _ = jsonrpc.RawID(id)
	}
	msg.Params, msg.Result = params, result
	*mv = metaVisitor{rm: rm, err: mv.err, done: mv.done}
	return true
}
