//go:build !race

package mcp

// releaseGuard checks nothing outside the race build (reqbuf_race.go).
type releaseGuard struct{}

func newReleaseGuard() releaseGuard { return releaseGuard{} }

func (releaseGuard) acquired(*[]byte) {}

func (releaseGuard) release(*[]byte) {}
