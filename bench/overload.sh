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
#   bench/overload.sh -tools burn -multiples 1,2,4 -duration 3s
# The output is Markdown to append to BENCHMARKS.md by hand.
#
# `bench/overload.sh cpus` is the goodput goal of issue 24 item 9: a 5 ms
# CPU-bound tool on servers of GOMAXPROCS 1 and 2, three runs per rate; with
# taskset and more CPUs than GOMAXPROCS, the server is pinned to the first
# GOMAXPROCS CPUs and the load generator to the rest. It ends with a table
# of the goodput at 2x and 4x against the goodput at 1x (capacity), with
# PASS or FAIL per goal (at least 90% at 2x, 80% at 4x). About 4 minutes;
# further flags are added to the preset's.
set -e
cd "$(dirname "$0")"
if [ "$1" = cpus ]; then
	shift
	set -- -impls mcpkit -tools burn -burn 5ms -gomaxprocs 1,2 -multiples 1,2,4 -reps 3 -duration 5s "$@"
fi
exec go run ./cmd/benchoverload "$@"
