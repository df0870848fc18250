#!/usr/bin/env bash
# scripts/validate-costs.sh [BUILD_DIR]: the GEMM cost model's validation table of
# docs/validation.md ("Cost models") on the measured tables in ../shared/data/costs
# (bench/costs_validation.cc; the scenarios and their rules: modeler/models/gemm/gemm_validation.h),
# then the same-GPU scenario once more through the real command line (costs fit on the
# calibration half, costs predict on the other half: the same split rule, SplitMix64 of the
# row index), which must give the same numbers. Needs python3 (splitting and arithmetic only).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
LUMOS_TARGETS="lumos-model lumos_costs_validation" bash scripts/build.sh "$build" >/dev/null
costs=../shared/data/costs
"$build/bench/lumos_costs_validation" "$costs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$costs/gemm_h100_bf16.csv" "$work" <<'PY'
import sys
M = (1 << 64) - 1
def splitmix64(x):
    x = (x + 0x9e3779b97f4a7c15) & M
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & M
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & M
    return x ^ (x >> 31)
seed = 13  # kValidationSeed
lines = open(sys.argv[1]).read().splitlines()
cal, test = [lines[0]], [lines[0]]
for i, line in enumerate(lines[1:]):
    (cal if splitmix64(seed + i) & 1 == 0 else test).append(line)
open(sys.argv[2] + "/calibration.csv", "w").write("\n".join(cal) + "\n")
open(sys.argv[2] + "/test.csv", "w").write("\n".join(test) + "\n")
PY
"$build/modeler/tools/lumos-model" costs fit "$work/calibration.csv" -o "$work/model.json" >/dev/null
"$build/modeler/tools/lumos-model" costs predict "$work/model.json" "$work/test.csv" \
  -o "$work/predicted.csv"
python3 - "$work/predicted.csv" <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
pairs = [(float(r["predicted_us"]), float(r["latency_us"])) for r in rows]
errors = sorted(abs(p - m) / m * 100 for p, m in pairs)
q = lambda x: errors[min(len(errors) - 1, math.floor(x * len(errors)))]
weighted = sum(abs(p - m) for p, m in pairs) / sum(m for p, m in pairs) * 100
print("\nthrough lumos-model costs fit/predict, H100 bf16 unseen half: %d rows, median %.1f %%, "
      "p90 %.1f %%, time-weighted %.1f %%" % (len(errors), q(0.5), q(0.9), weighted))
PY
