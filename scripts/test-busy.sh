#!/usr/bin/env bash
# scripts/test-busy.sh [BUILD_DIR] [ROUNDS] [ctest args...]: the CPU tests (label cpu) on one
# core beside a busy process, ROUNDS times (default 3): what a loaded CI machine does to them.
# A test whose assertion depends on how its threads or processes are scheduled fails here.
# Builds BUILD_DIR (default build) first: ninja, or scripts/build.sh when it is not configured
# yet. For the sanitizer build, configure it as scripts/test.sh does, then pass build-asan.
# Run it before you commit; one round is also part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
rounds=${2:-3}
shift $(($# < 2 ? $# : 2))
if [[ -f "$build_dir/build.ninja" ]]; then
  ninja -C "$build_dir"
else
  bash scripts/build.sh "$build_dir"
fi
# The first core this shell may run on (all of them outside a container's cpuset).
core=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
taskset -c "$core" sh -c 'while :; do :; done' &
busy=$!
tests=""
# On any exit (done, a failure, Ctrl-C, kill): the busy process goes, and so do running tests
# (ctest runs in a process group of its own, so that one kill reaches the tests it started).
cleanup() {
  kill "$busy" 2>/dev/null || true
  if [[ -n "$tests" ]]; then kill -- "-$tests" 2>/dev/null || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
for ((round = 1; round <= rounds; ++round)); do
  echo "== busy round $round of $rounds: $build_dir on core $core beside a busy process"
  setsid taskset -c "$core" ctest --test-dir "$build_dir" -L cpu -j1 --output-on-failure "$@" &
  tests=$!
  wait "$tests"
  tests=""
done
