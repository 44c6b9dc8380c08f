#!/usr/bin/env bash
# scripts/test.sh: THE one command that runs every test of mcpkit.
#
#   1. Go: `go vet` and `go test -race` in the root module and in every nested module
#      (each directory below the root with its own go.mod; bench/ runs with -short only).
#   2. Conformance: builds cmd/mcpkit, starts `mcpkit serve` on a free loopback port and runs the
#      pinned official MCP conformance suite against it, once per revision in ALL_REQUIREMENTS
#      (2026-07-28, and 2025-11-25 at the legacy wire) against the same server, each with its
#      committed baseline conformance/expected-failures-REV.yml (see conformance/README.md).
#   3. Tasks extension: runs every tasks-* scenario of the suite one by one against a fresh
#      `mcpkit serve` (`--scenario NAME --spec-version 2026-07-28 --force`); any FAILURE fails the
#      script. (--requirements runs them too, but does not score extension scenarios.)
#   4. Prints closing lines `conformance: N passed, M failed` (SUCCESS / FAILURE checks of the
#      --requirements runs) and `tasks: N passed, M failed`.
#
# Environment:
#   MCPKIT_SKIP_GO=1            skip step 1
#   MCPKIT_SKIP_CONFORMANCE=1   skip steps 2 and 3
#   MCPKIT_CACHE=DIR            where Node 22 and the suite are installed on first use
#                               (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcpkit)
#   MCPKIT_CONFORMANCE_OUT=DIR  keep the suite's checks.json files in DIR (default: a temp dir)
#
# Every step runs even if an earlier one failed; the script exits 1 if any step failed.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcpkit-test.XXXXXX")
cleanup() {
  stop_server
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

FAILED=()   # names of the steps that failed
SECONDS=0   # bash counts the elapsed time in it

# ---------------------------------------------------------------------------------------------
# 1. Go: vet and race-enabled tests, module by module.

# go_module DIR [GO TEST FLAGS...]: vet and test one module, from its own directory.
go_module() {
  local dir=$1; shift
  log "go vet + go test -race ${*:+$* }in ${dir}/"
  (cd "$ROOT/$dir" && go vet ./... && go test -race -count=1 "$@" ./...)
}

# Nested modules: every go.mod below the root, except in testdata/, vendor/ and node_modules/.
nested_modules() {
  find . -mindepth 2 -name go.mod \
    -not -path './.git/*' -not -path '*/testdata/*' -not -path '*/vendor/*' -not -path '*/node_modules/*' \
    -printf '%h\n' | sed 's#^\./##' | sort
}

# needs_services DIR: install what a module's tests need that Go cannot bring.
needs_services() {
  local dir=$1
  case $dir in
    redis | redis/*) ensure_redis ;;
    interop | interop/*) ensure_everything ;;   # the npm reference server, run over stdio
  esac
  # The multi-replica test puts nginx in front of several servers; install it for any module
  # whose tests mention nginx.
  if grep -rqlw --include='*_test.go' nginx "$ROOT/$dir" 2>/dev/null; then
    ensure_nginx
  fi
}

if [[ ${MCPKIT_SKIP_GO:-} == 1 ]]; then
  log "MCPKIT_SKIP_GO=1: skipping go vet / go test"
else
  go version
  needs_services .
  go_module . || FAILED+=("go: root module")
  while IFS= read -r dir; do
    needs_services "$dir"
    case $dir in
      bench | bench/*) go_module "$dir" -short || FAILED+=("go: $dir") ;;   # smoke run only
      *) go_module "$dir" || FAILED+=("go: $dir") ;;
    esac
  done < <(nested_modules)
  log "go steps done after ${SECONDS}s"
fi

# ---------------------------------------------------------------------------------------------
# 2. Conformance: the official suite against `mcpkit serve`, compared with the baseline.

SUMMARY="conformance: skipped"
if [[ ${MCPKIT_SKIP_CONFORMANCE:-} == 1 ]]; then
  log "MCPKIT_SKIP_CONFORMANCE=1: skipping the conformance suite"
else
  OUT=${MCPKIT_CONFORMANCE_OUT:-$TMP/conformance-results}
  rm -rf "$OUT" && mkdir -p "$OUT"
  ensure_conformance
  start_server "$TMP"
  passed=0 failed=0
  for req in "${ALL_REQUIREMENTS[@]}"; do
    log "running $CONFORMANCE_PKG --requirements $req"
    mkdir -p "$OUT/$req"
    rc=0
    conformance server --url "$SERVER_URL" --requirements "$req" \
      --expected-failures "$ROOT/conformance/expected-failures-$req.yml" -o "$OUT/$req" 2>&1 |
      tee "$TMP/suite-$req.log" || rc=$?
    if [[ $rc != 0 ]]; then
      FAILED+=("conformance $req (suite exit $rc: a failure not in the baseline, or a stale baseline entry)")
    fi
    counts=$(count_checks "$OUT/$req" "$TMP/suite-$req.log")   # "N passed, M failed"
    log "conformance $req: $counts"
    read -r p _ f _ <<<"${counts//,/}"
    passed=$((passed + p)) failed=$((failed + f))
  done
  stop_server
  if ((${#FAILED[@]})); then
    log "server log (tail):"
    tail -n 20 "$TMP/server.log" >&2 || true
  fi
  SUMMARY="conformance: $passed passed, $failed failed"
  log "conformance done after ${SECONDS}s"
fi

# ---------------------------------------------------------------------------------------------
# 3. Tasks extension scenarios, one by one: extension scenarios run only with --force.

TASKS_SUMMARY="tasks: skipped"
if [[ ${MCPKIT_SKIP_CONFORMANCE:-} != 1 ]]; then
  TASKS_OUT=$OUT/tasks
  mkdir -p "$TASKS_OUT"
  mapfile -t TASK_SCENARIOS < <(task_scenarios)
  if ((${#TASK_SCENARIOS[@]} == 0)); then
    FAILED+=("conformance: the suite lists no tasks-* scenario")
  fi
  start_server "$TMP"
  : >"$TMP/tasks.log"
  for sc in "${TASK_SCENARIOS[@]}"; do
    log "running $sc (--force)"
    rc=0
    conformance server --url "$SERVER_URL" --scenario "$sc" --spec-version "$REQUIREMENTS" --force \
      -o "$TASKS_OUT" >"$TMP/$sc.log" 2>&1 || rc=$?
    cat "$TMP/$sc.log" >>"$TMP/tasks.log"
    grep -E 'FAILURE|WARNING|Passed:|Failed to run' "$TMP/$sc.log" >&2 || true
    if [[ $rc != 0 ]]; then
      FAILED+=("conformance: $sc (exit $rc)")
    fi
  done
  stop_server
  TASKS_SUMMARY="tasks: $(count_checks "$TASKS_OUT" "$TMP/tasks.log") in ${#TASK_SCENARIOS[@]} scenarios"
  log "tasks scenarios done after ${SECONDS}s"
fi

# ---------------------------------------------------------------------------------------------
# 4. Verdict and closing lines.

echo
if ((${#FAILED[@]})); then
  echo "FAILED steps:"
  printf '  - %s\n' "${FAILED[@]}"
else
  echo "all steps passed (${SECONDS}s)"
fi
echo "$SUMMARY"
echo "$TASKS_SUMMARY"
((${#FAILED[@]} == 0))
