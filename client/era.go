package client

import (
	"context"
	"iter"

	iclient "github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/mcp"
)

// The era seam: everything the client does differently with a modern and
// a legacy server goes through clientEra, the mirror of the server's era
// seam (mcp/era.go). Connect picks the implementation once the era is
// settled (eraFor is the one place that looks at the session's era), and
// the rest of the client asks it instead of branching.
type clientEra interface {
	// era is the era as the public API reports it.
	era() mcp.Era
	// started finishes Connect on the settled session: a legacy HTTP
	// session opens its standalone GET stream.
	started(c *Client)
	// perRequestMeta reports whether every request carries the protocol
	// version, client capabilities, clientInfo and log level in _meta, and
	// the MCP headers on Streamable HTTP.
	perRequestMeta() bool
	// pingMethod is the request Ping sends.
	pingMethod() string
	// listen opens a Listen stream.
	listen(c *Client, ctx context.Context, filter ListenFilter) iter.Seq2[*ListenEvent, error]
}

// eraFor is the implementation of the era sess settled on.
func eraFor(sess *iclient.Session) clientEra {
	if sess.Era() == protocol.EraLegacy {
		return legacyClient{}
	}
	return modernClient{}
}

// modernClient speaks revision 2026-07-28: stateless, _meta on every
// request, server/discover, subscriptions/listen.
type modernClient struct{}

func (modernClient) era() mcp.Era         { return mcp.EraModern }
func (modernClient) started(*Client)      {}
func (modernClient) perRequestMeta() bool { return true }
func (modernClient) pingMethod() string   { return "server/discover" }
func (modernClient) listen(c *Client, ctx context.Context, f ListenFilter) iter.Seq2[*ListenEvent, error] {
	return c.listenModern(ctx, f)
}

// legacyClient speaks a session opened with initialize.
type legacyClient struct{}

func (legacyClient) era() mcp.Era { return mcp.EraLegacy }
func (legacyClient) started(c *Client) {
	if hc, ok := c.sess.Conn().(*iclient.HTTPConn); ok {
		hc.OpenStandaloneStream(c.opts.ConnectTimeout)
	}
}
func (legacyClient) perRequestMeta() bool { return false }
func (legacyClient) pingMethod() string   { return "ping" }
func (legacyClient) listen(c *Client, ctx context.Context, f ListenFilter) iter.Seq2[*ListenEvent, error] {
	return c.listenLegacy(ctx, f)
}
