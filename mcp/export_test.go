package mcp

// FlushChanges publishes the list changes that registrations scheduled,
// now rather than after changeDelay, so that tests can open listen streams
// that will not see them.
func (s *Server) FlushChanges() { s.flushChanges() }
