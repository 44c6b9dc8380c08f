#!/usr/bin/env bash
# bench/bridge.sh: mcpkit bridge side by side with the native server and two npm
# peers (mcp-proxy, supergateway), tools/call at 1 and 16 callers (issue 26; see
# cmd/benchbridge). The peers are installed by name into the test cache only
# (MCPKIT_CACHE/bridgepeers, pinned in scripts/lib.sh), run with Node 22 from the
# cache. Flags go to benchbridge (`bench/bridge.sh -duration 5s`). The output is
# Markdown to copy into bench/NOTES.md or BENCHMARKS.md by hand.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/scripts/lib.sh"
ensure_bridge_peers
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
go -C "$ROOT" build -o "$TMP/mcpkit" ./cmd/mcpkit
cd "$ROOT/bench"
go run ./cmd/benchbridge -mcpkit "$TMP/mcpkit" -peers "$BRIDGE_PEERS_DIR" -node "$NODE22_BIN" "$@"
