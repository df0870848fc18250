#!/usr/bin/env bash
# All tests: set up, build and run the CPU test suite, then again under AddressSanitizer +
# UndefinedBehaviorSanitizer. GPU tests (label gpu) skip themselves where no GPU is present.
# Fits CI's budget (90 min on 2 cores) with a wide margin.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

echo "== format"
bash scripts/setup.sh
if git rev-parse --git-dir >/dev/null 2>&1; then bash scripts/check-format.sh; fi

echo "== release build and tests"
bash scripts/build.sh build -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== parameterised cases have names (tests/testing/param_names.h), not numbers"
if ctest --test-dir build -N | grep -E '^ +Test +#[0-9]+: .*/[0-9]+$'; then
  echo "the cases above need a name generator (INSTANTIATE_TEST_SUITE_P's fourth argument)"
  exit 1
fi

echo "== release tests again, on one core beside a busy process (about 35 s)"
bash scripts/test-busy.sh build 1

echo "== clang-tidy"
if git rev-parse --git-dir >/dev/null 2>&1; then bash scripts/check-tidy.sh build; fi

echo "== address + undefined behaviour sanitizer build and tests"
LUMOS_BUILD_TYPE=Debug bash scripts/build.sh build-asan -DLUMOS_SANITIZE=address,undefined \
  -DLUMOS_BUILD_BENCHMARKS=OFF
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"

echo "== fuzz: the trace reader, its packets, the control protocol and the Kineto importer"
# Bounded (LUMOS_FUZZ_SECONDS each, default 30; 0 skips): libFuzzer + ASan + UBSan with clang,
# from the committed seeds; a crash, leak or timeout fails the run (scripts/fuzz.sh).
fuzz_seconds=${LUMOS_FUZZ_SECONDS:-30}
if [ "$fuzz_seconds" -gt 0 ]; then bash scripts/fuzz.sh "$fuzz_seconds" all; fi
