//go:build !linux

package mcp

// hangupWatch is a no-op here: a parked stream whose client went away is
// noticed at the next keep-alive or notification.
type hangupWatch struct{}

func (*hangupWatch) add(*parkedStream)    {}
func (*hangupWatch) remove(*parkedStream) {}
