package park

import (
	"net"
	"sync"
	"syscall"
)

// Hanger is told that the peer of a watched connection hung up.
type Hanger interface {
	// Hangup is called once, from the watch's goroutine, without locks
	// held; it must not block.
	Hangup()
}

// Watch notices at once when the peer of a watched connection closes it,
// as net/http's background read does for a stream that stays in its
// handler: one epoll instance per Watch watches every connection for the
// peer's hang-up (EPOLLRDHUP, one-shot), and one goroutine waits on it
// while any connection is watched. The zero Watch is ready to use; its
// methods are safe for concurrent use.
type Watch struct {
	mu      sync.Mutex
	epfd    int
	running bool
	next    uint64
	watched map[uint64]Hanger
}

// Add watches c and returns its id for Remove: 0 when c is not watched
// (a connection without a file descriptor; none of net/http's), whose
// hang-up is noticed at the next write instead.
func (w *Watch) Add(c net.Conn, h Hanger) uint64 {
	rc, ok := syscallConn(c)
	if !ok {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running {
		fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			return 0
		}
		w.epfd, w.running = fd, true
		if w.watched == nil {
			w.watched = make(map[uint64]Hanger)
		}
		go w.loop(w.epfd)
	}
	w.next++
	id := w.next
	ev := syscall.EpollEvent{Events: syscall.EPOLLRDHUP | syscall.EPOLLONESHOT, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
	var err error
	rc.Control(func(fd uintptr) { err = syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev) })
	if err != nil {
		return 0
	}
	w.watched[id] = h
	return id
}

// Remove stops watching c (added as id), which is about to close. An id
// of 0 or one already reported is ignored.
func (w *Watch) Remove(c net.Conn, id uint64) {
	if id == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.watched[id]; !ok {
		return
	}
	delete(w.watched, id)
	if rc, ok := syscallConn(c); ok {
		rc.Control(func(fd uintptr) { syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_DEL, int(fd), nil) })
	}
}

// loop reports hang-ups until nothing is watched; the wait times out
// every second to notice that.
func (w *Watch) loop(epfd int) {
	events := make([]syscall.EpollEvent, 64)
	for {
		n, err := syscall.EpollWait(epfd, events, 1000)
		if err != nil && err != syscall.EINTR {
			n = 0
		}
		w.mu.Lock()
		var gone []Hanger
		for _, ev := range events[:max(n, 0)] {
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if h, ok := w.watched[id]; ok {
				delete(w.watched, id)
				gone = append(gone, h)
			}
		}
		exit := len(w.watched) == 0
		if exit {
			syscall.Close(epfd)
			w.running = false
		}
		w.mu.Unlock()
		for _, h := range gone {
			h.Hangup()
		}
		if exit {
			return
		}
	}
}
