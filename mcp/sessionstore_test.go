package mcp_test

import (
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

func TestMemorySessionStoreSuite(t *testing.T) {
	mcptest.TestSessionStore(t, func(t *testing.T, idle time.Duration) mcp.SessionStore {
		return mcp.NewMemorySessionStore(idle)
	})
}
