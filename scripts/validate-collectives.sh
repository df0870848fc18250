#!/usr/bin/env bash
# scripts/validate-collectives.sh [BUILD_DIR]: the collective model's validation tables of
# docs/validation.md ("Collective model", Markdown on stdout) from NVIDIA's measured tables in
# ../shared/data/costs: fit the 2- and 4-rank rows and predict the 8-rank rows (H100, A100);
# fit every H100 row and predict every A100 row; each beside its baselines. Then the "8 ranks
# from 2 and 4" case once more through the real command line as a user runs it (costs fit on a
# table of the 2- and 4-rank rows, costs predict on the 8-rank rows), which must give the
# library's numbers. With --rows after BUILD_DIR: every test row and its prediction (CSV) of
# the library instead. Needs awk and python3 (splitting and arithmetic only).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
LUMOS_TARGETS="lumos_collective_validation lumos-model" bash scripts/build.sh "$build" >/dev/null
costs=../shared/data/costs
"$build/bench/lumos_collective_validation" "$@" "$costs/nccl_h100.csv" "$costs/nccl_a100.csv"
[ "${1:-}" = --rows ] && exit 0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo
echo "Through lumos-model costs fit / costs predict (fit 2 and 4 ranks, predict 8):"
echo
echo "| case | rows | median error | time-weighted error | p90 | max |"
echo "|---|---:|---:|---:|---:|---:|"
for gpu in h100 a100; do
  # The column of ranks by name: the header says where it is.
  awk -F, -v out="$work/$gpu" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "ranks") r = i;
      print > (out "_calibration.csv"); print > (out "_test.csv"); next }
    $r == 2 || $r == 4 { print > (out "_calibration.csv") }
    $r == 8 { print > (out "_test.csv") }' "$costs/nccl_$gpu.csv"
  "$build/modeler/tools/lumos-model" costs fit "$work/${gpu}_calibration.csv" \
    -o "$work/$gpu.json" >/dev/null
  # The test rows keep latency_us: predict carries it as a column and ignores it.
  "$build/modeler/tools/lumos-model" costs predict "$work/$gpu.json" "$work/${gpu}_test.csv" \
    -o "$work/${gpu}_predicted.csv"
  python3 - "$work/${gpu}_predicted.csv" "$gpu" <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
pairs = [(float(r["predicted_us"]), float(r["latency_us"])) for r in rows]
errors = sorted(abs(p - m) / m for p, m in pairs)
n = len(errors)
# As modeler/models/collectives/collective_validation.cc summarises: the median of an even count is the
# mean of the middle two; p90 the ceil(0.9 n)-th.
median = errors[n // 2] if n % 2 else (errors[n // 2 - 1] + errors[n // 2]) / 2
p90 = errors[min(n - 1, math.ceil(0.9 * n) - 1)]
weighted = sum(abs(p - m) for p, m in pairs) / sum(m for p, m in pairs)
print("| %s: fit 2 and 4 ranks, predict 8 | %d | %.1f %% | %.1f %% | %.1f %% | %.1f %% |"
      % (sys.argv[2].upper(), n, 100 * median, 100 * weighted, 100 * p90, 100 * errors[-1]))
PY
done
