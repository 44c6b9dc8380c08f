package mcp

import (
	"sync"
	"syscall"
)

// hangupWatch notices at once when the client of a parked stream closes
// its connection, as net/http's background read does for a stream that
// stays in its handler: one epoll instance per server watches every parked
// connection for the peer's hang-up (EPOLLRDHUP, one-shot), and one
// goroutine waits on it while any stream is parked. The stream is then
// closed and unregistered by a writer (subscription.hup).
type hangupWatch struct {
	mu      sync.Mutex
	epfd    int
	running bool
	next    uint64
	streams map[uint64]*parkedStream
}

// add watches ps's connection. Connections without a file descriptor
// (none of net/http's) are noticed at the next keep-alive instead.
func (w *hangupWatch) add(ps *parkedStream) {
	rc, ok := syscallConn(ps.conn)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running {
		fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			return
		}
		w.epfd, w.running = fd, true
		if w.streams == nil {
			w.streams = make(map[uint64]*parkedStream)
		}
		go w.loop(w.epfd)
	}
	w.next++
	id := w.next
	ev := syscall.EpollEvent{Events: syscall.EPOLLRDHUP | syscall.EPOLLONESHOT, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
	var err error
	rc.Control(func(fd uintptr) { err = syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev) })
	if err == nil {
		w.streams[id] = ps
		ps.watch = id
	}
}

// remove stops watching ps, whose connection is about to close.
func (w *hangupWatch) remove(ps *parkedStream) {
	if ps.watch == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.streams[ps.watch]; !ok {
		return
	}
	delete(w.streams, ps.watch)
	if rc, ok := syscallConn(ps.conn); ok {
		rc.Control(func(fd uintptr) { syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_DEL, int(fd), nil) })
	}
}

// loop reports hang-ups until no stream is watched; the wait times out
// every second to notice that.
func (w *hangupWatch) loop(epfd int) {
	events := make([]syscall.EpollEvent, 64)
	for {
		n, err := syscall.EpollWait(epfd, events, 1000)
		if err != nil && err != syscall.EINTR {
			n = 0
		}
		w.mu.Lock()
		var gone []*parkedStream
		for _, ev := range events[:max(n, 0)] {
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if ps, ok := w.streams[id]; ok {
				delete(w.streams, id)
				gone = append(gone, ps)
			}
		}
		exit := len(w.streams) == 0
		if exit {
			syscall.Close(epfd)
			w.running = false
		}
		w.mu.Unlock()
		for _, ps := range gone {
			ps.hangup()
		}
		if exit {
			return
		}
	}
}
