package load

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// readStreams reads every stream with a few epoll loops instead of a
// goroutine per stream: each stream's socket is duplicated out of Go's
// poller (its net.Conn is closed; the duplicate keeps the connection
// open), and a loop per CPU waits for readable sockets and reads each
// once. A change to 18,000 streams then costs the harness one read
// system call per stream rather than a goroutine wake-up and two reads,
// which matters when the harness shares the cores with the servers it
// measures. stop ends the loops and closes the sockets.
func readStreams(readers []*replicaReader, t *replicaTally) (stop func(), err error) {
	loops := max(1, min(runtime.NumCPU(), 4))
	epfds := make([]int, 0, loops)
	fds := make([]int, 0, len(readers))
	var quit atomic.Bool
	var wg sync.WaitGroup
	stop = func() {
		quit.Store(true)
		wg.Wait()
		for _, fd := range epfds {
			syscall.Close(fd)
		}
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}
	for range loops {
		fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			stop()
			return nil, fmt.Errorf("epoll_create1: %w", err)
		}
		epfds = append(epfds, fd)
	}
	byFD := make(map[int32]*replicaReader, len(readers))
	for i, rd := range readers {
		// Bytes buffered before this point came before any change: the
		// acknowledgment's tail or a keep-alive; a notification cannot
		// be among them.
		sc, ok := rd.s.conn.(syscall.Conn)
		if !ok {
			stop()
			return nil, errors.New("a listen stream's connection is not a socket")
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			stop()
			return nil, err
		}
		dup := -1
		var derr error
		if err := rc.Control(func(fd uintptr) { dup, derr = syscall.Dup(int(fd)) }); err != nil || derr != nil {
			stop()
			return nil, fmt.Errorf("duplicating a listen stream's socket: %v", errors.Join(err, derr))
		}
		fds = append(fds, dup)
		syscall.CloseOnExec(dup)
		rd.s.conn.Close() // the duplicate keeps the connection; it is non-blocking like the original
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(dup)}
		if err := syscall.EpollCtl(epfds[i%loops], syscall.EPOLL_CTL_ADD, dup, &ev); err != nil {
			stop()
			return nil, fmt.Errorf("epoll_ctl: %w", err)
		}
		byFD[int32(dup)] = rd
	}
	for _, epfd := range epfds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			events := make([]syscall.EpollEvent, 256)
			buf := make([]byte, 4096)
			for !quit.Load() {
				n, err := syscall.EpollWait(epfd, events, 50)
				if err != nil {
					if err == syscall.EINTR {
						continue
					}
					t.fail(0, fmt.Errorf("epoll_wait: %w", err))
					return
				}
				for _, ev := range events[:n] {
					rd := byFD[ev.Fd]
					k, err := syscall.Read(int(ev.Fd), buf)
					now := time.Now()
					switch {
					case err == syscall.EAGAIN || err == syscall.EINTR:
						continue
					case err != nil:
						t.fail(rd.s.id, fmt.Errorf("reading the stream: %w", err))
					case k == 0:
						t.fail(rd.s.id, errors.New("reading the stream: EOF"))
					}
					if err != nil || k == 0 {
						// Reported once; the run fails. Stop watching it.
						syscall.EpollCtl(epfd, syscall.EPOLL_CTL_DEL, int(ev.Fd), nil)
						continue
					}
					c, ferr := rd.feed(buf[:k], now)
					t.count(c)
					if ferr != nil {
						t.fail(rd.s.id, ferr)
						syscall.EpollCtl(epfd, syscall.EPOLL_CTL_DEL, int(ev.Fd), nil)
					}
				}
			}
		}()
	}
	return stop, nil
}

// killWithParent has the kernel kill cmd's process when the harness dies
// (PR_SET_PDEATHSIG), so that a killed run leaves no redis-server behind.
func killWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
