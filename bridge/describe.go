package bridge

import "github.com/mcpkit/mcpkit/mcp"

// Description is what a bridge's backend declared in its probe session.
type Description struct {
	// Info is the backend's serverInfo (zero when it sent none).
	Info mcp.Implementation
	// Capabilities are the backend's capabilities as it declared them.
	Capabilities mcp.ServerCapabilities
	// Instructions are the backend's instructions, or "".
	Instructions string
}

// Describe returns what the backend declared when it last started (a
// gateway merges these). It is safe for concurrent use.
func (b *Bridge) Describe() Description {
	b.mu.Lock()
	probe := b.probe
	b.mu.Unlock()
	var d Description
	if probe == nil {
		return d
	}
	if info := probe.ServerInfo(); info != nil {
		d.Info = *info
	}
	d.Capabilities = *probe.Capabilities()
	d.Instructions = probe.Instructions()
	return d
}
