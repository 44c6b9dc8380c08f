#!/bin/sh
# bench/scale.sh: the long scale runs that bench/run.sh leaves out (see
# cmd/benchscale): the listener curve of one process at 1k, 5k, 10k and
# 19k idle subscriptions/listen streams (server RSS per stream, idle CPU
# with keep-alives, fan-out p50/p99 of one tools/list_changed). About
# three minutes per implementation on a quiet 2-core machine; every server
# is on 127.0.0.1, started and stopped by the run, every size bounded.
# Flags go to benchscale (`bench/scale.sh -h`); a small run:
#   bench/scale.sh -sizes 500,1000 -changes 3 -idle 16s
# The output is a Markdown table to append to BENCHMARKS.md by hand.
#
# Replicas mode (cmd/benchscale/replicas.go, load/replicas.go):
#   bench/scale.sh -replicas 3 -per-replica 6000 -changes 9
# starts one redis-server on 127.0.0.1 (a free port, its own temporary
# directory, --save '' --appendonly no; killed at the end, on an error, on
# SIGINT/SIGTERM, and by the kernel should the harness die), three mcpkit
# benchservers sharing it (-redis: the Redis bus of the nested module
# redis/), opens 6,000 listen streams on each replica directly (one
# connection each: the harness holds 18,000 sockets, so it checks its
# open-file limit first), and makes 9 changes, each a tools/call of touch
# on one replica in turn. Every stream must get exactly one
# notifications/tools/list_changed per change with its own subscriptionId,
# or the run fails. Output: p50/p99/max from the touch to each stream's
# read, split by streams on the changed replica and on the others, the
# touch-to-Redis time, the Redis PING round trip, and per replica the RSS
# per stream and the CPU per change. Under 30 s in all; needs
# redis-server on PATH (or -redis-server PATH).
set -e
cd "$(dirname "$0")"
exec go run ./cmd/benchscale "$@"
