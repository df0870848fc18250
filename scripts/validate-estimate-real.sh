#!/usr/bin/env bash
# scripts/validate-estimate-real.sh [BUILD_DIR]: docs/validation.md's "Estimates against real H200
# runs": each variant of ../shared/data/traces/h200-pytorch (layers, width, seq, batch x2) estimated
# from `est-base` alone, and the base estimated back from each variant's own trace, against the
# measured ratio of their step times (steps.csv: the traced runs, `how` = lumos-run, and the
# plain runs). Nothing here was fitted on these runs: the estimate reads the one trace it is given
# (and the shared A100/H100 tables its cost models carry), never steps.csv. Deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
LUMOS_TARGETS="lumos-model" bash scripts/build.sh "$build" >/dev/null
lm="$build/modeler/tools/lumos-model"
data=../shared/data/traces/h200-pytorch

# The loop's settings per run (scripts/gpu/train_loop.py: ffn = 4 x width, one GPU, one
# micro-batch); the traces of the agent at 75ca577 name no device, so --gpu says which.
setup() {
  local layers=4 hidden=1024 seq=1024 mbs=4
  case $1 in
    layers) layers=8 ;;
    width) hidden=2048 ;;
    seq) seq=2048 ;;
    batch) mbs=8 ;;
  esac
  echo "layers=$layers,hidden=$hidden,ffn=$((4 * hidden)),heads=16,seq=$seq,mbs=$mbs"
}
trace() { [ "$1" = base ] && echo "$data/est-base.pb.zst" || echo "$data/est-$1.pb.zst"; }
# ratio FROM TO: the estimated iteration of TO's setup over FROM's replayed one, from FROM's trace.
ratio() {
  "$lm" estimate "$(trace "$1")" --gpu H200-SXM-141GB --iteration '^step$' \
    --base "$(setup "$1"),micro_batches=1,world=1,dp=1,tp=1,pp=1" --set "$(setup "$2")" --json |
    python3 -c '
import json, sys
d = json.load(sys.stdin)["estimate"]
print(d["estimate"]["iteration_ns"] / d["base"]["iteration_ns"])'
}

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for variant in layers width seq batch; do
  echo "base $variant $(ratio base "$variant")" >>"$rows"
  echo "$variant base $(ratio "$variant" base)" >>"$rows"
done
python3 - "$data/steps.csv" "$rows" <<'PY'
import csv, statistics, sys
steps = {row["run"]: float(row["median_ms"]) for row in csv.DictReader(open(sys.argv[1]))}
def measured(run, how):
    name = "est-base" if run == "base" else f"est-{run}"
    return steps[name + ("-plain" if how == "plain" else "")]
print("| from | to | estimated ratio | traced ratio | error | plain ratio | error |")
print("|---|---|---:|---:|---:|---:|---:|")
errors = {"traced": [], "plain": []}
for line in open(sys.argv[2]):
    source, target, estimate = line.split()
    estimate = float(estimate)
    cells = []
    for how in ("traced", "plain"):
        truth = measured(target, how) / measured(source, how)
        error = 100 * (estimate / truth - 1)
        errors[how].append(abs(error))
        cells += [f"{truth:.3f}", f"{error:+.1f} %"]
    print(f"| {source} | {target} | {estimate:.3f} | {' | '.join(cells)} |")
print()
for how, values in errors.items():
    print(f"against the {how} runs: mean |error| {statistics.fmean(values):.1f} %, "
          f"max {max(values):.1f} % (target: mean <= 3 %, each <= 6 %)")
PY
