package load

import (
	"bufio"
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// notifyWatch reads the notifications of many listen streams at once, for
// the fan-out cases (MeasureFanout, MeasureListenScale). The readers share
// the two cores with the server, so what they do per notification counts in
// the measured time; it is kept small and the same for every
// implementation: one goroutine per stream reads its events (the runtime's
// netpoller wakes only the streams that have data), and for each
// notification it takes the time, copies the message into the stream's
// buffer and counts it. There is no channel send and no JSON decoding per
// notification: the waiting side checks each message in full (encoding/json,
// method, no id, the stream's own subscriptionId) once every stream has
// its notification, outside the measured time, and it checks the counts:
// exactly one per change per stream.
type notifyWatch struct {
	streams []*listenStream
	// total counts the notifications of every stream; the reader whose
	// notification makes it reach target signals reached.
	total   atomic.Int64
	target  atomic.Int64
	reached chan struct{}
	errs    chan error
	closing atomic.Bool
}

// streamNotes is what a stream's reader records: how many notifications
// it read, when it read the last one, and a copy of it.
type streamNotes struct {
	got  atomic.Int64
	at   atomic.Int64 // time.Time.UnixNano of the last notification
	mu   sync.Mutex
	last []byte
}

// watchNotifications starts a reader for every stream. Stop it with close
// before closing the streams.
func watchNotifications(streams []*listenStream) *notifyWatch {
	w := &notifyWatch{streams: streams, reached: make(chan struct{}, 1), errs: make(chan error, 1)}
	w.target.Store(-1)
	for _, s := range streams {
		go w.read(s)
	}
	return w
}

// close tells the readers that the streams are about to close: the read
// errors that follow are not reported.
func (w *notifyWatch) close() { w.closing.Store(true) }

// read reads s's events until its stream ends; keep-alive comments, event:
// and id: lines are skipped, and every data: line is a notification.
func (w *notifyWatch) read(s *listenStream) {
	for {
		line, err := s.events.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// No notification of these cases is that long: report it
			// rather than skip it.
			w.fail(fmt.Errorf("listener %d: a line longer than %d bytes: %.200q", s.id, s.events.Size(), line))
			return
		}
		if err != nil {
			if !w.closing.Load() {
				w.fail(fmt.Errorf("listener %d: reading the stream: %w", s.id, err))
			}
			return
		}
		d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
		if !ok {
			continue
		}
		now := time.Now().UnixNano()
		n := &s.notes
		n.mu.Lock()
		n.last = append(n.last[:0], bytes.TrimSpace(d)...)
		n.mu.Unlock()
		n.at.Store(now)
		n.got.Add(1)
		if w.total.Add(1) == w.target.Load() {
			select {
			case w.reached <- struct{}{}:
			default:
			}
		}
	}
}

// fail reports the first reader error.
func (w *notifyWatch) fail(err error) {
	select {
	case w.errs <- err:
	default:
	}
}

// change triggers the k-th change (1, 2, ...) with trigger and waits until
// every stream has read its k-th notification, or for timeout. It returns
// the time trigger was called and the delivery time of every stream (from
// then to the stream's reading of its notification), each notification
// checked.
func (w *notifyWatch) change(k int, timeout time.Duration, trigger func() error) (time.Time, []time.Duration, error) {
	n := len(w.streams)
	want := int64(n) * int64(k)
	if got := w.total.Load(); got != want-int64(n) {
		return time.Time{}, nil, fmt.Errorf("%d notifications before change %d, want %d: one per change per listener", got, k, want-int64(n))
	}
	select {
	case <-w.reached: // a stale signal cannot be: drain anyway
	default:
	}
	w.target.Store(want)
	t0 := time.Now()
	if err := trigger(); err != nil {
		return t0, nil, err
	}
	if w.total.Load() < want {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-w.reached:
		case err := <-w.errs:
			return t0, nil, err
		case <-t.C:
			return t0, nil, fmt.Errorf("change %d: %d of %d listeners received notifications/tools/list_changed within %s", k, w.total.Load()-want+int64(n), n, timeout)
		}
	}
	// The total reached the target: either every listener has its one
	// notification, or one has two and another none yet. Name the one with
	// two first, whatever the order the listeners are checked in.
	for _, s := range w.streams {
		if s.notes.got.Load() > int64(k) {
			return t0, nil, fmt.Errorf("listener %d received two notifications for one change", s.id)
		}
	}
	delays := make([]time.Duration, 0, n)
	for _, s := range w.streams {
		nt := &s.notes
		if nt.got.Load() < int64(k) {
			return t0, nil, fmt.Errorf("listener %d: no notification for change %d while another listener had two", s.id, k)
		}
		nt.mu.Lock()
		err := checkListChanged(nt.last, s.id)
		nt.mu.Unlock()
		if err != nil {
			return t0, nil, fmt.Errorf("listener %d: %w", s.id, err)
		}
		delays = append(delays, time.Unix(0, nt.at.Load()).Sub(t0))
	}
	return t0, delays, nil
}

// quiet waits for d and fails if any stream received a notification
// meanwhile (more than one for the last change), or a reader failed.
func (w *notifyWatch) quiet(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-w.errs:
		return err
	case <-t.C:
	}
	if got, want := w.total.Load(), w.target.Load(); got != want {
		for _, s := range w.streams {
			if s.notes.got.Load() > w.target.Load()/int64(len(w.streams)) {
				return fmt.Errorf("listener %d received two notifications for one change", s.id)
			}
		}
		return fmt.Errorf("%d notifications, want %d", got, want)
	}
	return nil
}
