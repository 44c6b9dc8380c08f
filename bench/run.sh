#!/bin/sh
# bench/run.sh: runs every benchmark (about nine minutes on two cores) and
# writes BENCHMARKS.md at the repository root. Flags go to benchall; see
# `bench/run.sh -h`. The smoke run that CI does is `cd bench && go test -short ./...`.
set -e
cd "$(dirname "$0")"
BENCH_COMMAND="bench/run.sh${*:+ $*}" exec go run ./cmd/benchall "$@"
