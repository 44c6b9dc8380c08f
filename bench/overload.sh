#!/bin/sh
# bench/overload.sh: overload without collapse (issue 20, goal 2; see
# cmd/benchoverload). For the tools burn (about 1 ms of CPU per call) and
# sleep (50 ms), each implementation's capacity in a closed loop, then
# open-loop Poisson load at 1x, 2x and 4x mcpkit's capacity, the same
# rates for every implementation, each run 10 s on a fresh server process:
# goodput, 503s with Retry-After, errors, timeouts, p50/p99 of the answered
# requests from their scheduled send time, server CPU and peak RSS. About
# five minutes on a 2-core machine; every server is on 127.0.0.1, started
# and stopped by the run. Flags go to benchoverload (`bench/overload.sh -h`);
# a small run:
#   bench/overload.sh -tools burn -multiples 1,4 -duration 3s
# The output is Markdown to append to BENCHMARKS.md by hand.
set -e
cd "$(dirname "$0")"
exec go run ./cmd/benchoverload "$@"
