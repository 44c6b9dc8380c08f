// Package gateway serves many MCP servers behind one 2026-07-28 endpoint:
// a Gateway holds one bridge.Bridge per backend (a stdio command, a URL of
// either era, or a server in the same process) and routes the requests of
// one front mcp.Server to them.
//
// Tools and prompts are named SERVER_NAME (the separator is "_", which a
// server name cannot contain; a name splits at its first "_"); one backend
// may go without the prefix. Resources keep their URIs and route to the
// backend that listed them, or whose template matches. Lists merged from
// the backends page across them with cursors sealed with the front
// server's state keys, so any replica sharing the keys continues them.
// Configuration comes from YAML (Load, Parse) or from Go (Backend).
package gateway
