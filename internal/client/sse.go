package client

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Event is one Server-Sent Event.
type Event struct {
	// Name is the event type ("message" when the stream did not name one).
	Name string
	// Data is the event's data: its data lines joined with "\n".
	Data []byte
	// ID is the event's id field, if any.
	ID string
	// Retry is the reconnection time in milliseconds that the event's
	// retry field set, or -1 when it had none.
	Retry int64
}

// maxEventBytes bounds one event (and one line) of an SSE stream, so that a
// misbehaving server cannot make the client buffer without limit.
const maxEventBytes = 16 << 20

var errEventTooLarge = errors.New("SSE event larger than 16 MiB")

// sseReader reads events from a text/event-stream body, following the
// WHATWG event-stream interpretation: lines end in CRLF, LF or CR; lines
// starting with ':' are comments; a blank line dispatches the event; an
// event without data is not dispatched.
type sseReader struct {
	r       *bufio.Reader
	lastID  string // the last event id seen, which persists across events
	retry   int64  // the last retry value seen, -1 for none
	pendCR  bool   // the previous line ended in a lone CR: skip one LF
	started bool   // the UTF-8 BOM check ran
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), retry: -1}
}

// LastEventID returns the last event id the stream set, to resume it with
// Last-Event-ID.
func (s *sseReader) LastEventID() string { return s.lastID }

// Retry returns the last reconnection time (milliseconds) the stream set,
// or -1.
func (s *sseReader) Retry() int64 { return s.retry }

// readLine returns the next line without its terminator. It copies
// whole runs of buffered bytes, not byte by byte.
func (s *sseReader) readLine() ([]byte, error) {
	var line []byte
	for {
		if s.pendCR {
			b, err := s.r.ReadByte()
			if err != nil {
				return nil, err
			}
			s.pendCR = false
			if b != '\n' {
				s.r.UnreadByte()
			}
		}
		if _, err := s.r.Peek(1); err != nil {
			if err == io.EOF && len(line) > 0 {
				return line, nil // a final line without terminator
			}
			return nil, err
		}
		chunk, _ := s.r.Peek(s.r.Buffered())
		i := bytes.IndexAny(chunk, "\r\n")
		if i < 0 {
			if len(line)+len(chunk) > maxEventBytes {
				return nil, errEventTooLarge
			}
			line = append(line, chunk...)
			s.r.Discard(len(chunk))
			continue
		}
		if len(line)+i > maxEventBytes {
			return nil, errEventTooLarge
		}
		line = append(line, chunk[:i]...)
		s.pendCR = chunk[i] == '\r'
		s.r.Discard(i + 1)
		return line, nil
	}
}

// Next returns the next event. It returns io.EOF at the end of the stream;
// an event that was not terminated by a blank line is discarded, as the
// specification requires.
func (s *sseReader) Next() (Event, error) {
	var (
		ev      = Event{Retry: -1}
		data    []byte
		hasData bool
		size    int
	)
	for {
		line, err := s.readLine()
		if err != nil {
			return Event{}, err
		}
		if !s.started {
			s.started = true
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(line) == 0 {
			if !hasData {
				ev = Event{ID: ev.ID, Retry: -1}
				continue
			}
			if ev.Name == "" {
				ev.Name = "message"
			}
			ev.Data = data
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		size += len(value)
		if size > maxEventBytes {
			return Event{}, errEventTooLarge
		}
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.ID = string(value)
				s.lastID = ev.ID
			}
		case "retry":
			if n, ok := parseRetry(value); ok {
				ev.Retry = n
				s.retry = n
			}
		}
	}
}

// parseRetry parses a retry field: ASCII digits only, bounded to a day so
// that a hostile server cannot park a reconnecting client for ever.
func parseRetry(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 12 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return min(n, 24*60*60*1000), true
}
