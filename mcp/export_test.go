package mcp

import (
	"strconv"
	"sync/atomic"
	"time"
)

// SetTaskClock makes s's tasks deterministic for tests in package mcp_test:
// every timestamp is now (also for the expiry of a MemoryTaskStore), and task ids are "task-1", "task-2", ...
func SetTaskClock(s *Server, now time.Time) {
	var n atomic.Int64
	s.tasks.now = func() time.Time { return now }
	s.tasks.newID = func() string { return "task-" + strconv.FormatInt(n.Add(1), 10) }
	s.tasks.enable()
	if m, ok := s.tasks.store.(*MemoryTaskStore); ok {
		m.now = s.tasks.now
	}
}

// HostNameForTest exposes hostName to the external tests.
var HostNameForTest = hostName

// ParkedListenStreams returns how many of s's listen streams are parked
// without a handler.
func ParkedListenStreams(s *Server) int { return s.listen.parkedCount() }

// OpenListenStreams returns how many subscriptions/listen streams of s are
// open (parked or not).
func OpenListenStreams(s *Server) int {
	s.listen.mu.Lock()
	defer s.listen.mu.Unlock()
	return len(s.listen.subs)
}

// SetParkedWriteTimeout changes how long a write to one of s's parked
// listen streams may wait for its client (100 ms).
func SetParkedWriteTimeout(s *Server, d time.Duration) { s.listen.writeTimeout = d }

// StalledListenStreams returns how many of s's parked listen streams have a
// write waiting for their client.
func StalledListenStreams(s *Server) int { return int(s.listen.stalled.Load()) }

// MaxParkWriters is how many goroutines write to parked streams at most.
const MaxParkWriters = maxParkWriters

// KeepAliveSlices is how many slices the keep-alive rounds of parked
// streams are cut into.
const KeepAliveSlices = keepAliveSlices

// SetStateClock makes the server's requestState sealing see now + d.
func SetStateClock(s *Server, d time.Duration) {
	s.state.now = func() time.Time { return time.Now().Add(d) }
}
