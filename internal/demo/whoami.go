package demo

import (
	"context"
	"strings"

	"github.com/mcpkit/mcpkit/mcp"
)

// addWhoami registers the whoami tool, which shows what a protected server
// knows about its caller (see docs/auth.md).
func addWhoami(s *mcp.Server) { AddWhoami(s) }

// AddWhoami registers (or replaces) the whoami tool, requiring scopes of
// callers with a token (mcpkit serve --auth-whoami-scopes).
func AddWhoami(s *mcp.Server, scopes ...string) {
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Tells who the caller is, as the server's authorization sees it: the token's subject, client and scopes, or anonymous.", Scopes: scopes},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			p := req.Info.Principal
			if p == nil {
				return "anonymous (this server does not require authorization on this transport)", nil
			}
			var b strings.Builder
			b.WriteString("subject: " + p.Subject + "\nissuer: " + p.Issuer)
			if p.ClientID != "" {
				b.WriteString("\nclient: " + p.ClientID)
			}
			b.WriteString("\nscopes: " + strings.Join(p.Scopes, " "))
			if !p.Expiry.IsZero() {
				b.WriteString("\nexpires: " + p.Expiry.UTC().Format("2006-01-02T15:04:05Z"))
			}
			return b.String(), nil
		})
}
