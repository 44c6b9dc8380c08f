package client

import "io"

// EventReader reads the Server-Sent Events of a text/event-stream body
// one at a time, with the same reader (and the same bounds) the client
// uses for every stream it reads. Tests that must look at a stream event
// by event use it rather than a line scanner of their own.
type EventReader struct{ r *sseReader }

// NewEventReader returns an EventReader of r.
func NewEventReader(r io.Reader) *EventReader { return &EventReader{r: newSSEReader(r)} }

// Next returns the next event that carries data. It returns io.EOF at
// the end of the stream; an event not terminated by a blank line is
// discarded, as the specification requires.
func (e *EventReader) Next() (Event, error) { return e.r.Next() }
