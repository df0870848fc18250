#!/usr/bin/env bash
# scripts/validate-h200-gemms.sh [BUILD_DIR]: docs/validation.md's "Traced GEMMs against the
# tables": the GEMM kernels of our real H200 runs (../shared/data/traces/h200-pytorch: PyTorch
# bf16 training loops, forward, input and weight gradients, run for seconds on end) against
# NVIDIA's H100 bf16 table (gemm_h100_bf16.csv: each shape timed in a short CUDA-graph burst)
# carried to the H200 by its specs. `costs fit TRACE --traced-gemms` writes each run's points
# (one per shape, the median of its calls); `costs fit` on the table alone, then `costs
# predict`, answers them. Prints, per run, measured / predicted summed over its shapes and the
# range over its shapes. Fitted on: the table only; nothing here reads a step time.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
LUMOS_TARGETS="lumos-model" bash scripts/build.sh "$build" >/dev/null
lm="$build/modeler/tools/lumos-model"
traces=../shared/data/traces/h200-pytorch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$lm" costs fit ../shared/data/costs/gemm_h100_bf16.csv -o "$work/table.json" >/dev/null
echo "| run | shapes | measured ms (sum of the shapes' medians) | predicted ms | measured / predicted | per shape: min - max |"
echo "|---|---:|---:|---:|---:|---:|"
for run in est-base est-layers est-width est-seq est-batch gpt-lumos gpt-both small-lumos; do
  "$lm" costs fit "$traces/$run.pb.zst" --gpu H200-SXM-141GB -o "$work/$run.json" \
    --traced-gemms "$work/$run.csv" >/dev/null
  cut -d, -f1-5 "$work/$run.csv" >"$work/$run-q.csv"
  "$lm" costs predict "$work/table.json" "$work/$run-q.csv" -o "$work/$run-p.csv"
  python3 - "$run" "$work/$run.csv" "$work/$run-p.csv" <<'PY'
import csv, sys
run, measured, predicted = sys.argv[1:]
m = [float(r["latency_us"]) for r in csv.DictReader(open(measured))]
p = [float(r["predicted_us"]) for r in csv.DictReader(open(predicted))]
assert len(m) == len(p), f"{run}: {len(m)} points measured, {len(p)} predicted"
ratios = [a / b for a, b in zip(m, p)]
print(f"| {run} | {len(m)} | {sum(m) / 1e3:.3f} | {sum(p) / 1e3:.3f} | {sum(m) / sum(p):.3f} | "
      f"{min(ratios):.3f} - {max(ratios):.3f} |")
PY
done
