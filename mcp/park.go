package mcp

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/park"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Parked listen streams.
//
// On Streamable HTTP over HTTP/1.x, a subscriptions/listen stream that has
// been opened takes its connection from net/http (Hijack), writes the
// response head and the acknowledgement itself, and leaves its handler:
// net/http's per-connection goroutines, buffers and request state are
// gone, and the idle stream is a parkedStream, its subscription and its
// connection. The changes for a parked stream are written by a few
// writer goroutines that exist only while there is something to write;
// one ticker per server sends the keep-alive comments. The stream is never
// read: on Linux, an epoll instance notices a client that closes its
// connection at once (park.Watch); elsewhere that is noticed at the next
// keep-alive (a non-blocking peek at the socket, where the platform has
// one) or when a write fails.

const (
	// parkedWriteTimeout bounds each batch of writes to a parked stream.
	// A client that leaves the kernel's socket buffers full for this long
	// does not keep up: its stream is dropped, as a slow client's is when
	// listenBuffer changes wait for it.
	parkedWriteTimeout = 100 * time.Millisecond
	// maxParkWriters bounds the goroutines writing to parked streams. It
	// does not depend on GOMAXPROCS: a writer stuck on a client that does
	// not read (for up to parkedWriteTimeout) uses no CPU, and the others
	// go on meanwhile.
	maxParkWriters = 8
)

// parkedHead is the response head of a parked stream. The body has
// neither a length nor chunks: it ends when the connection closes, so the
// connection is not reused (Connection: close).
const parkedHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\nConnection: close\r\n\r\n"

// parker is implemented by Notifiers whose response can leave its handler:
// httpSink on HTTP/1.x. hijack returns the connection, or nil when the
// response cannot be taken over; pipelined reports request bytes that
// arrived after this request (net/http had read them already).
type parker interface {
	hijack() (conn net.Conn, pipelined bool)
}

// parkedStream is a listen stream without a handler. Its writes happen in
// service, which one writer at a time runs (subscription.busy).
type parkedStream struct {
	conn net.Conn
	st   *listenStream
	// held is set for a stream whose handler stays (pipelined bytes): it
	// is closed when the stream ends.
	held chan struct{}
	// done, set on a server with interceptors, is closed when the stream
	// ends: the handler waits for it, so that the interceptors see the
	// stream as one call that lasts as long as it (the connection is still
	// parked: only the handler's goroutine stays).
	done chan struct{}
	// completed says that the stream ended with its completion result
	// (Shutdown), and endErr why it ended otherwise; both are set before
	// done is closed.
	completed bool
	endErr    error
	out       []byte   // the events being written, in the writer's buffer
	watch     uint64   // the stream's id in the park.Watch; 0: not watched
	raw       park.Raw // not Valid: every write waits, with a deadline
}

// parkWriters runs the writers of a server's parked streams: a queue of
// streams that have something to write, and up to maxParkWriters
// goroutines that exit when it is empty.
type parkWriters struct {
	mu      sync.Mutex
	queue   []*parkedStream
	head    int
	running int
}

func (w *parkWriters) add(due ...*parkedStream) {
	if len(due) == 0 {
		return
	}
	w.mu.Lock()
	w.queue = append(w.queue, due...)
	n := min(len(w.queue)-w.head, maxParkWriters) - w.running
	w.running += max(n, 0)
	w.mu.Unlock()
	for range n {
		go w.work()
	}
}

func (w *parkWriters) work() {
	var buf []byte
	wr := new(park.Writer)
	for {
		w.mu.Lock()
		if w.head == len(w.queue) {
			clear(w.queue)
			w.queue, w.head = w.queue[:0], 0
			w.running--
			w.mu.Unlock()
			return
		}
		ps := w.queue[w.head]
		w.queue[w.head] = nil
		w.head++
		w.mu.Unlock()
		buf = ps.service(buf, wr)
	}
}

// hijackListen takes the connection of st's stream from net/http when the
// transport allows it, and writes the response head and the
// acknowledgement (the notification method and params) to it. It reports
// false, having written nothing, when the stream stays with its handler
// the usual way; an error means that the connection failed and is closed.
func (l *listeners) hijackListen(st *listenStream, method string, params []byte) (bool, error) {
	pk, ok := st.x.notifier.(parker)
	if !ok || l.s.opts.HTTP.DisableListenParking {
		return false, nil
	}
	conn, pipelined := pk.hijack()
	if conn == nil {
		return false, nil
	}
	buf := l.s.getBuf()
	out := append(*buf, parkedHead...)
	out = appendEvent(out, method, params)
	conn.SetWriteDeadline(time.Now().Add(l.writeTimeout))
	_, err := conn.Write(out)
	*buf = out
	l.s.putBuf(buf)
	if err != nil {
		conn.Close()
		return true, err
	}
	ps := &parkedStream{conn: conn, st: st, raw: park.RawOf(conn)}
	if ps.raw.Valid() {
		conn.SetWriteDeadline(time.Time{})
	}
	// The stream keeps a copy of the exchange with what its writes need:
	// the request's exchange holds the Notifier, which holds net/http's
	// response, connection and buffers. The id is copied: the stream
	// outlives the request buffer it points into.
	x := st.x
	st.x = &exchange{s: x.s, id: x.id.Clone(), method: x.method}
	st.x.info.Era, st.x.info.Principal, st.x.info.ProtocolVersion = x.info.Era, x.info.Principal, x.info.ProtocolVersion
	if pipelined {
		// Request bytes that net/http had read past this request cannot
		// be handed back to it: the head says Connection: close, so the
		// client retries them elsewhere. The stream is not parked: its
		// handler stays until the stream ends.
		ps.held = make(chan struct{})
	}
	if l.s.icpt != nil && ps.held == nil {
		ps.done = make(chan struct{})
	}
	st.park = ps
	ps.watch = l.hangups.Add(conn, ps)
	l.mu.Lock()
	l.parked++
	tick := l.s.keepAlive > 0 && !l.ticking
	if tick {
		l.ticking = true
	}
	l.mu.Unlock()
	if tick {
		go l.keepAliveLoop()
	}
	sub := st.sub
	sub.mu.Lock()
	sub.park = ps
	sub.abort = nil // the sink's: it holds net/http's response
	run := sub.end != subOpen || len(sub.pending) > 0 || sub.hup
	sub.busy = run
	sub.mu.Unlock()
	if run {
		l.writers.add(ps)
	}
	return true, nil
}

// appendEvent appends one SSE event holding the notification.
func appendEvent(dst []byte, method string, params []byte) []byte {
	dst = append(dst, "event: message\ndata: "...)
	dst = jsonrpc.AppendNotification(dst, method, params)
	return append(dst, "\n\n"...)
}

// scheduleLocked reports whether the parked stream must be handed to a
// writer, and marks it busy if so. Callers hold sub.mu.
func (sub *subscription) scheduleLocked() *parkedStream {
	if sub.park == nil || sub.busy {
		return nil
	}
	sub.busy = true
	return sub.park
}

// keepAliveSlices is how many rounds one keep-alive interval is cut into:
// each round pings the parked streams of one slice (a stream's slice is
// its value in listeners.subs), so every stream still gets a comment once
// per interval, but never all at once: with tens of thousands of streams,
// one round of all of them costs as much as a change, and a change that
// came during it waited for it.
const keepAliveSlices = 16

// keepAliveSlot is the keep-alive slice of the n-th stream opened when
// pinged was the slice pinged last: one of the half of the slices pinged
// last, so that a new stream's first comment comes between 7/16 of the
// interval and the whole interval after it opened (never at once, as a
// client reading the stream's first bytes would see it), and a burst of
// streams opened at once still spreads over half of the rounds.
func keepAliveSlot(pinged, n uint8) uint8 {
	const half = keepAliveSlices / 2
	return (pinged + half + n%half) % keepAliveSlices
}

// keepAliveLoop sends the keep-alive comments of every parked stream, one
// slice of them per keepAlive/keepAliveSlices, until none is parked.
func (l *listeners) keepAliveLoop() {
	t := time.NewTicker(max(l.s.keepAlive/keepAliveSlices, time.Millisecond))
	defer t.Stop()
	var due []*parkedStream
	for range t.C {
		due = due[:0]
		l.mu.Lock()
		l.pinged = (l.pinged + 1) % keepAliveSlices
		slice := l.pinged
		if l.parked == 0 {
			l.ticking = false
			l.mu.Unlock()
			return
		}
		for sub, slot := range l.subs {
			if slot != slice {
				continue // without touching the subscription
			}
			sub.mu.Lock()
			if sub.park != nil {
				sub.ping = true
				if ps := sub.scheduleLocked(); ps != nil {
					due = append(due, ps)
				}
			}
			sub.mu.Unlock()
		}
		l.mu.Unlock()
		l.writers.add(due...)
		clear(due)
	}
}

// service writes what waits for the stream: its pending changes, a
// keep-alive comment, or its end, with the writer's buffer and scratch
// (wr). It returns buf, the writer's buffer, for the next stream.
func (ps *parkedStream) service(buf []byte, wr *park.Writer) []byte {
	st, sub := ps.st, ps.st.sub
	for {
		ps.out = buf[:0]
		sub.mu.Lock()
		ping, hup := sub.ping, sub.hup
		sub.ping = false
		sub.mu.Unlock()
		if hup {
			ps.end(errPeerClosed)
			return buf
		}
		// Changes arrive through the Bus; the request that opened the
		// stream is long answered, so task lookups get a fresh context.
		res, end, _ := st.flush(context.Background(), nil)
		var err error
		if ping && !end && len(ps.out) == 0 {
			if park.PeerClosed(ps.conn) {
				err = errPeerClosed
			} else {
				ps.out = append(ps.out, ":\n\n"...)
			}
		}
		if end && len(res) > 0 {
			ps.out = append(ps.out, "event: message\ndata: "...)
			ps.out = append(append(ps.out, res...), "\n\n"...)
		}
		final := end && len(res) > 0
		var rest []byte
		if err == nil && len(ps.out) > 0 {
			rest, err = ps.write(wr, ps.out)
		}
		if err == nil && len(rest) > 0 {
			// The socket's buffer is full: the rest is written on a
			// goroutine of its own, under parkedWriteTimeout, so that
			// this writer goes on with the other streams. The stream
			// stays busy until then.
			rest = append([]byte(nil), rest...)
			buf, ps.out = ps.out[:0], nil
			st.x.s.listen.stalled.Add(1)
			go ps.finish(rest, end, final)
			return buf
		}
		buf, ps.out = ps.out[:0], nil
		if cap(buf) > 64<<10 {
			buf = nil
		}
		if end || err != nil {
			ps.completed = final && err == nil
			ps.end(err)
			return buf
		}
		if ps.idle() {
			return buf
		}
	}
}

// idle reports whether nothing waits for the stream any more, and then
// leaves it to be scheduled again (not busy).
func (ps *parkedStream) idle() bool {
	sub := ps.st.sub
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if len(sub.pending) == 0 && sub.end == subOpen && !sub.ping && !sub.hup {
		sub.busy = false
		return true
	}
	return false
}

// write writes b to the stream's connection. With a raw socket it writes
// what the socket takes at once and returns the rest; otherwise it waits
// until all of b is written, for up to parkedWriteTimeout.
func (ps *parkedStream) write(wr *park.Writer, b []byte) ([]byte, error) {
	if !ps.raw.Valid() {
		return nil, ps.writeWait(b)
	}
	return wr.Try(ps.raw, b)
}

// writeWait writes b under parkedWriteTimeout. A RawConn write needs the
// connection without a deadline afterwards: a deadline that has passed
// fails every later write.
func (ps *parkedStream) writeWait(b []byte) error {
	ps.conn.SetWriteDeadline(time.Now().Add(ps.st.x.s.listen.writeTimeout))
	_, err := ps.conn.Write(b)
	if err == nil && ps.raw.Valid() {
		ps.conn.SetWriteDeadline(time.Time{})
	}
	return err
}

// finish writes rest, what did not fit in the socket's buffer, and then
// goes on serving the stream as its writer would have (end: the stream
// ends after rest; final: with its completion result).
func (ps *parkedStream) finish(rest []byte, end, final bool) {
	err := ps.writeWait(rest)
	ps.st.x.s.listen.stalled.Add(-1)
	if end || err != nil {
		ps.completed = final && err == nil
		ps.end(err)
		return
	}
	if !ps.idle() {
		ps.service(nil, new(park.Writer))
	}
}

// errPeerClosed says that the client closed its end of a parked stream.
var errPeerClosed = errors.New("mcp: the client closed the connection")

// end closes a parked stream's connection and unregisters it. The stream
// stays busy, so that nothing schedules it again.
func (ps *parkedStream) end(err error) {
	sub := ps.st.sub
	s := ps.st.x.s
	if errors.Is(err, os.ErrDeadlineExceeded) {
		sub.mu.Lock()
		logged := sub.end == subDropped // deliver has logged the drop
		sub.mu.Unlock()
		if !logged {
			s.log.Warn("mcp: dropping a subscriptions/listen stream: its client does not keep up with notifications", "subscriptionId", logField(sub.id), "writeTimeout", s.listen.writeTimeout)
		}
	}
	l := &s.listen
	l.hangups.Remove(ps.conn, ps.watch)
	ps.conn.Close()
	// Unpark and unregister in one step, so that a parked count of zero
	// means the slots are free again.
	l.mu.Lock()
	l.parked--
	delete(l.subs, sub)
	l.mu.Unlock()
	s.quota.release(quotaSubscriptions, sub.client)
	sub.observedEnd()
	l.wg.Done()
	if ps.held != nil {
		close(ps.held)
	}
	if ps.done != nil {
		ps.endErr = err
		close(ps.done)
	}
}

// Hangup ends a stream whose client closed its connection (park.Hanger).
func (ps *parkedStream) Hangup() {
	sub := ps.st.sub
	sub.mu.Lock()
	sub.hup = true
	run := sub.scheduleLocked()
	sub.mu.Unlock()
	if run != nil {
		ps.st.x.s.listen.writers.add(run)
	}
}

// notify adds a notification to the events being written.
func (ps *parkedStream) notify(method string, params []byte) {
	ps.out = appendEvent(ps.out, method, params)
}

// parkedCount returns how many listen streams are parked: written by the
// writers, with no handler left (held ones have one).
func (l *listeners) parkedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for sub := range l.subs {
		sub.mu.Lock()
		if sub.park != nil && sub.park.held == nil {
			n++
		}
		sub.mu.Unlock()
	}
	return n
}
