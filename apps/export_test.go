package apps

import "github.com/mcpkit/mcpkit/mcp"

// Exported for the tests of package apps_test.
var (
	CheckOrigin   = checkOrigin
	LooksLikeHTML = looksLikeHTML
)

// ServerSource reads s in process, as Validate does.
func ServerSource(s *mcp.Server) Source { return &serverSource{s: s} }
