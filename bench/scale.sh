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
set -e
cd "$(dirname "$0")"
exec go run ./cmd/benchscale "$@"
