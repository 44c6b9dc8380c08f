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
	// method and rm are what line decoded into (with a finished
	// metaVisitor, without a _meta error), with the spans into line set
	// to nil: at holds where those spans (params, then the _meta members
	// and the params that rm.p was packed from, as listed by cachedSpans)
	// lie in line; n is 0 for a nil span.
	method string
	rm     reqMeta
	at     [numCached]struct{ off, n int }
}

// numCached is the number of spans a decodeCache moves: the ones
// cachedSpans lists.
const numCached = 7

// cachedSpans returns pointers to the spans of msg and mv that point into
// the decoded line, besides the id and a response's result: every span
// reqMeta holds must be here (TestStdioCallOwnsSpans checks that moveSpans,
// which moves these, leaves none behind).
func cachedSpans(msg *jsonrpc.Message, mv *metaVisitor) [numCached]*[]byte {
	rm := &mv.rm
	return [numCached]*[]byte{(*[]byte)(&msg.Params), &rm.version, &rm.caps, &rm.clientInfo, &rm.logLevel, &rm.progressToken, &rm.p.src}
}

// decode decodes line as decodeVisit does, with mv (zero) collecting the
// _meta of params and finished, through the cache. msg and mv point into
// line.
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
// with another id: it sets msg and mv to the remembered ones with their
// spans in line.
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
	// A span after the id moves with the end of the id; none spans it.
	shift := len(rawID) - (dc.idEnd - dc.idStart)
	span := func(i int) []byte {
		a := dc.at[i]
		if a.n == 0 {
			return nil
		}
		off := a.off
		if off >= dc.idEnd {
			off += shift
		}
		return line[off : off+a.n]
	}
	// In the order of cachedSpans.
	*msg = jsonrpc.Message{Method: dc.method, Params: span(0)}
	msg.ID, _ = jsonrpc.RawID(rawID)
	mv.rm, mv.err, mv.done = dc.rm, nil, true
	rm := &mv.rm
	rm.version, rm.caps, rm.clientInfo, rm.logLevel, rm.progressToken = span(1), span(2), span(3), span(4), span(5)
	rm.p.src = span(6)
	return true
}

// store remembers line, a request that decoded into msg and mv, when it
// can answer later lines: a request with an id whose _meta (if any) is
// well formed, and not too long.
func (dc *decodeCache) store(line []byte, msg *jsonrpc.Message, mv *metaVisitor) {
	rawID := msg.ID.Raw()
	if !msg.IsRequest() || mv.err != nil || msg.Result != nil || len(line) > maxCachedLine || !plainID(rawID) {
		return
	}
	start, ok := spanOffset(line, rawID)
	if !ok {
		return
	}
	end := start + len(rawID)
	var at [numCached]struct{ off, n int }
	for i, p := range cachedSpans(msg, mv) {
		if *p == nil {
			continue
		}
		off, ok := spanOffset(line, *p)
		if !ok || (off < end && off+len(*p) > start) {
			return // outside line, or around the id
		}
		at[i].off, at[i].n = off, len(*p)
	}
	dc.line = append(dc.line[:0], line...)
	dc.idStart, dc.idEnd, dc.at = start, end, at
	dc.method, dc.rm = msg.Method, mv.rm
	// The spans are set on every hit, from at; drop the ones into line.
	var m jsonrpc.Message
	v := metaVisitor{rm: dc.rm}
	for _, p := range cachedSpans(&m, &v) {
		*p = nil
	}
	dc.rm = v.rm
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
// to, a copy of from: a span of from becomes the same span of to. It
// reports false, leaving msg and mv unchanged, when a span is not inside
// from. mv must be finished; what finish leaves besides rm and err is
// dropped (nothing reads it again).
func moveSpans(msg *jsonrpc.Message, mv *metaVisitor, from, to []byte) bool {
	ok := true
	move := func(b []byte) []byte {
		if b == nil || !ok {
			return b
		}
		off, in := spanOffset(from, b)
		if !in || off+len(b) > len(to) {
			ok = false
			return b
		}
		return to[off : off+len(b)]
	}
	m, v := *msg, metaVisitor{rm: mv.rm, err: mv.err, done: mv.done}
	id := move(m.ID.Raw())
	m.Result = move(m.Result)
	for _, p := range cachedSpans(&m, &v) {
		*p = move(*p)
	}
	if !ok {
		return false
	}
	if id != nil {
		m.ID, _ = jsonrpc.RawID(id)
	}
	*msg, *mv = m, v
	return true
}
