//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mcp

import (
	"testing"
)

// TestKeepAliveSlot checks when a new parked stream gets its first
// keep-alive comment: never in the round after it opened, always within
// one interval (keepAliveSlices rounds), and streams opened in a burst
// spread over half of the rounds.
func TestKeepAliveSlot(t *testing.T) {
	for pinged := range uint8(keepAliveSlices) {
		rounds := map[int]bool{}
		for n := range uint8(255) {
			slot := keepAliveSlot(pinged, n)
			if slot >= keepAliveSlices {
				t.Fatalf("keepAliveSlot(%d, %d) = %d, want < %d", pinged, n, slot, keepAliveSlices)
			}
			// The loop pings pinged+1 at the next round, pinged+k at the k-th.
			k := (int(slot)-int(pinged)+keepAliveSlices-1)%keepAliveSlices + 1
			if k < keepAliveSlices/2 || k > keepAliveSlices {
				t.Errorf("keepAliveSlot(%d, %d): first comment in round %d, want %d to %d", pinged, n, k, keepAliveSlices/2, keepAliveSlices)
			}
			rounds[k] = true
		}
		if len(rounds) != keepAliveSlices/2 {
			t.Errorf("after slice %d: streams spread over %d rounds, want %d", pinged, len(rounds), keepAliveSlices/2)
		}
	}
}
