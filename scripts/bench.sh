#!/usr/bin/env bash
# scripts/bench.sh [REPETITIONS] [BENCHMARK_FILTER]: configures a Release build in build-bench/
# (LUMOS_BENCH_BUILD overrides), builds the benchmarks, runs them with REPETITIONS (default 9)
# and prints medians and coefficients of variation, then the size report. Full output (all
# aggregates, JSON) goes to <build>/bench/results/. See docs/performance.md for the numbers
# and how to read them. Needs a quiet machine: other load shows up as a high *_cv.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-9}
filter=${2:-.}
build=${LUMOS_BENCH_BUILD:-build-bench}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLUMOS_BUILD_TESTS=OFF \
  -DLUMOS_BUILD_BENCHMARKS=ON >/dev/null
ninja -C "$build" lumos_writer_benchmark lumos_reader_benchmark lumos_trace_size_report
# lumos-model is only needed by scripts/import-sizes.sh; do not fail the benchmarks over it.
ninja -C "$build" lumos-model >/dev/null 2>&1 || echo "bench.sh: lumos-model did not build" >&2

results="$build/bench/results"
mkdir -p "$results"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for name in writer reader; do
  "$build/bench/lumos_${name}_benchmark" --benchmark_filter="$filter" \
    --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
    --benchmark_out="$results/$name.json" --benchmark_out_format=json \
    > "$results/$name.txt" 2>&1 || { cat "$results/$name.txt"; exit 1; }
  grep -E '^(lumos_|Benchmark|-+$)|_(median|cv) |BM_BytesPerEventByKind' "$results/$name.txt"
done
"$build/bench/lumos_trace_size_report" | tee "$results/size_report.txt"
