#!/usr/bin/env bash
# scripts/validate-traced-gemms.sh [BUILD_DIR]: the GEMM model on traced kernels
# (docs/validation.md, "GEMM model on traced kernels"), through the command line as a user runs
# it, on the shared HTA control trace (A100-SXM4-40GB, PyTorch profiler with record_shapes):
#   (a) its traced tf32 GEMM shapes (scripts/traced-gemms.py: one per shape, the median of its
#       calls, exactly the points costs fit takes from its import) split in two halves by
#       shape with seed 13; costs fit on one half, costs predict the other;
#   (b) the model fitted on NVIDIA's measured table gemm_a100_bf16.csv (A100-SXM4-80GB, bf16)
#       predicting every traced shape (tf32 and fp32) on A100-SXM4-40GB.
# Prints the median, p90 and time-weighted relative error of each. Needs python3. With
# LUMOS_MODEL=PATH it runs that binary and builds nothing (its test does so).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
lumos=${LUMOS_MODEL:-}
if [[ -z "$lumos" ]]; then
  LUMOS_TARGETS="lumos-model" bash scripts/build.sh "$build" >/dev/null
  lumos="$build/modeler/tools/lumos-model"
fi
trace=../shared/data/traces/hta-single-rank/control.json.gz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 scripts/traced-gemms.py "$trace" --split 13 "$work/a.csv" "$work/b.csv" >"$work/all.json"
# (a): the tf32 halves (the fp32 shapes are too few for a surface).
for half in a b; do
  { head -1 "$work/$half.csv"; grep ',tf32,' "$work/$half.csv"; } | sed 's/^NVIDIA A100-PG509-200/A100-SXM4-40GB/' >"$work/$half-tf32.csv"
done
"$lumos" costs fit "$work/a-tf32.csv" -o "$work/half.json" >/dev/null
"$lumos" costs predict "$work/half.json" "$work/b-tf32.csv" -o "$work/half-predicted.csv"
# (b): every traced shape, predicted from NVIDIA's bf16 table.
{ head -1 "$work/a.csv"; tail -n +2 "$work/a.csv"; tail -n +2 "$work/b.csv"; } |
  sed 's/^NVIDIA A100-PG509-200/A100-SXM4-40GB/' >"$work/all.csv"
"$lumos" costs fit ../shared/data/costs/gemm_a100_bf16.csv -o "$work/table.json" >/dev/null
"$lumos" costs predict "$work/table.json" "$work/all.csv" -o "$work/table-predicted.csv"
python3 - "$work/half-predicted.csv" "$work/table-predicted.csv" <<'PY'
import collections, csv, math, sys
def report(title, rows):
    pairs = [(float(r["predicted_us"]), float(r["latency_us"])) for r in rows]
    errors = sorted(abs(p - m) / m * 100 for p, m in pairs)
    q = lambda x: errors[min(len(errors) - 1, math.floor(x * len(errors)))]
    weighted = sum(abs(p - m) for p, m in pairs) / sum(m for _, m in pairs) * 100
    sources = collections.Counter(r["source"] for r in rows)
    print(f"{title}: {len(rows)} shapes, median {q(0.5):.1f} %, p90 {q(0.9):.1f} %, "
          f"time-weighted {weighted:.1f} % ({', '.join(f'{n} {s}' for s, n in sources.most_common())})")
half = list(csv.DictReader(open(sys.argv[1])))
table = list(csv.DictReader(open(sys.argv[2])))
report("(a) tf32 half from the other half", half)
for dtype in ("tf32", "fp32"):
    report(f"(b) {dtype} from gemm_a100_bf16.csv", [r for r in table if r["dtype"] == dtype])
PY
