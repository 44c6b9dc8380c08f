#!/usr/bin/env bash
# bench/gateway.sh: mcpkit gateway against mcpkit bridge (issue 27, see
# cmd/benchgateway): tools/call at 16 callers through a gateway with one server
# against the bridge alone (goal: within 10%), and a tools/list merged from 10
# servers against one server's (goal: within 2x). Every backend is `mcpkit serve
# --stdio --fixtures --era legacy`. Flags go to benchgateway (`bench/gateway.sh
# -duration 8s`). The output is Markdown to copy into bench/NOTES.md or
# BENCHMARKS.md by hand.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
go -C "$ROOT" build -o "$TMP/mcpkit" ./cmd/mcpkit
cd "$ROOT/bench"
go run ./cmd/benchgateway -mcpkit "$TMP/mcpkit" "$@"
