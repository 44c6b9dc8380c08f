#!/usr/bin/env bash
# scripts/replace-lines.sh: print the go.mod replace lines that point the nested modules of this
# repository (redis, otel, otel/otelenv, full, ...) at this clone, for a module that uses mcpkit
# before it is published (README.md, "Getting started"). Paths are relative to the current
# directory. Append them to go.mod, then run go mod tidy:
#
#   ../mcpkit/scripts/replace-lines.sh >>go.mod
#
# The root module's own replace line is the user's (go mod edit -replace, as the README shows).
# Modules that only test or benchmark mcpkit (interop, bench) are left out.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rel=$(realpath -s --relative-to="$PWD" "$(dirname "${BASH_SOURCE[0]}")/..")   # as the user named the clone
echo
(cd "$root" && find . -mindepth 2 -name go.mod -not -path './.git/*' -not -path '*/testdata/*' \
  -not -path '*/node_modules/*' -not -path './interop/*' -not -path './bench/*' -printf '%h\n') |
  sed 's#^\./##' | sort |
  while read -r dir; do
    echo "replace github.com/mcpkit/mcpkit/$dir => $rel/$dir"
  done
