#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS] [reader|packets|control|kineto|all]: builds the fuzzers with clang
# (libFuzzer + ASan + UBSan, in build-fuzz/) and runs each for SECONDS (default 60):
#   reader   lumos_trace_reader_fuzzer: whole trace files (seeds tests/data/fuzz_seeds/trace_reader)
#   packets  lumos_trace_packets_fuzzer: decompressed frame contents (seeds .../trace_packets)
#   control  lumos_control_protocol_fuzzer: control messages, lumos-ctl <-> agent (seeds
#            .../control_protocol)
#   kineto   lumos_kineto_import_fuzzer: PyTorch profiler JSON through the importer, the trace
#            it writes read back (seeds .../kineto_import)
# The growing corpora live in fuzz-corpus-<name>/ and crash/leak/timeout reproducers in
# fuzz-corpus-artifacts/ (both git-ignored). Reproduce one with
#   build-fuzz/tests/fuzz/lumos_trace_reader_fuzzer fuzz-corpus-artifacts/crash-...
# Exits non-zero when a fuzzer finds something. scripts/test.sh runs each for 30 s on every CI
# run (LUMOS_FUZZ_SECONDS; 0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
which=${2:-all}
build=build-fuzz
sanitize="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLUMOS_BUILD_FUZZERS=ON -DLUMOS_BUILD_TESTS=OFF -DLUMOS_BUILD_BENCHMARKS=OFF \
  -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_CXX_FLAGS="$sanitize" >/dev/null
case "$which" in
  reader) targets=lumos_trace_reader_fuzzer ;;
  packets) targets=lumos_trace_packets_fuzzer ;;
  control) targets=lumos_control_protocol_fuzzer ;;
  kineto) targets=lumos_kineto_import_fuzzer ;;
  all) targets="lumos_trace_reader_fuzzer lumos_trace_packets_fuzzer lumos_control_protocol_fuzzer
    lumos_kineto_import_fuzzer" ;;
  *) echo "usage: scripts/fuzz.sh [SECONDS] [reader|packets|control|kineto|all]" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
ninja -C "$build" $targets lumos_make_fuzz_seeds

mkdir -p fuzz-corpus-artifacts
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
run() {  # run NAME SEEDS MAX_LEN
  local name=$1
  mkdir -p "fuzz-corpus-$name"
  echo "== lumos_${name}_fuzzer for ${seconds}s"
  "$build/tests/fuzz/lumos_${name}_fuzzer" "fuzz-corpus-$name" \
    "tests/data/fuzz_seeds/$2" -dict="tests/fuzz/$name.dict" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$3" \
    -artifact_prefix=fuzz-corpus-artifacts/ -print_final_stats=1 || status=$?
}
case "$which" in
  reader) run trace_reader trace_reader 65536 ;;
  packets) run trace_packets trace_packets 65536 ;;
  control) run control_protocol control_protocol 4200 ;;
  kineto) run kineto_import kineto_import 65536 ;;
  all)
    run trace_reader trace_reader 65536
    run trace_packets trace_packets 65536
    run control_protocol control_protocol 4200
    run kineto_import kineto_import 65536
    ;;
esac
if [ "$status" -ne 0 ]; then
  echo "fuzz.sh: a fuzzer failed (exit $status); reproducers are in fuzz-corpus-artifacts/" >&2
fi
exit "$status"
