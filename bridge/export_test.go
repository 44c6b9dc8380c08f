package bridge

// EndedSessions counts the pooled sessions whose backend connection has
// ended, as the bridge sees them.
func EndedSessions(b *Bridge) int {
	b.pool.mu.Lock()
	defer b.pool.mu.Unlock()
	n := 0
	for _, ss := range b.pool.byKey {
		for _, s := range ss {
			if s.ended() {
				n++
			}
		}
	}
	return n
}

// Sessions counts the open backend sessions, the probe not counted.
func Sessions(b *Bridge) int {
	b.pool.mu.Lock()
	defer b.pool.mu.Unlock()
	return b.pool.total
}

// Held counts the backend calls held on this replica for their retry (or
// a task's tasks/update).
func Held(b *Bridge) int {
	b.held.mu.Lock()
	defer b.held.mu.Unlock()
	return len(b.held.m)
}

// EndSessions ends every pooled backend session's connection, as a
// backend restart does (the probe session is left alone).
func EndSessions(b *Bridge) {
	b.pool.mu.Lock()
	var all []*session
	for _, ss := range b.pool.byKey {
		all = append(all, ss...)
	}
	b.pool.mu.Unlock()
	for _, s := range all {
		s.c.Close()
	}
}
