#!/usr/bin/env bash
# scripts/validate-repartition.sh [BUILD_DIR]: docs/validation.md's "Re-partitioning a traced
# job" (modeler/estimate/repartition.h). Two parts:
#  1. mechanics: three `synth gpt` jobs of one model on 4 GPUs (tp x dp = 2x2, 4x1, 1x4; a test
#     double whose kernels come from the cost models' defaults, not a GPU), each re-partitioned
#     to the other two and compared with that job's own replay;
#  2. real traces, answers without a measured counterpart (none of another layout is held):
#     the H200 GPU-bound loop (gpt-lumos, the sizes its trace does not show given with --base)
#     split by tp and pp, and the Megatron-LM tp 8 A100 profile (tests/data) re-laid as tp 4 x pp 2.
# Deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
LUMOS_TARGETS="lumos-model" bash scripts/build.sh "$build" >/dev/null
lm="$build/modeler/tools/lumos-model"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
model=layers=4,hidden=2048,heads=16,seq=2048,mbs=2,micro_batches=4,vocab=32000,iterations=3
for layout in 2x2 4x1 1x4; do
  "$lm" synth gpt --set "$model,tp=${layout%x*},dp=${layout#*x}" -o "$work/$layout" >/dev/null
done
echo "| from (tp x dp) | to | estimated ms | the target job's replay ms | error |"
echo "|---|---|---:|---:|---:|"
for from in 2x2 4x1 1x4; do
  for to in 2x2 4x1 1x4; do
    [ "$from" = "$to" ] && continue
    est=$("$lm" estimate "$work/$from" --set "tp=${to%x*},dp=${to#*x}" --json)
    back=$("$lm" estimate "$work/$to" --set "tp=${from%x*},dp=${from#*x}" --json)
    python3 -c '
import json, sys
e, b = json.loads(sys.argv[3]), json.loads(sys.argv[4])
est, measured = e["estimated_iteration_s"] * 1e3, b["measured_iteration_s"] * 1e3
print("| %s | %s | %.2f | %.2f | %+.1f %% |" % (sys.argv[1], sys.argv[2], est, measured, 100 * (est / measured - 1)))
' "$from" "$to" "$est" "$back"
  done
done
echo
gpt=../shared/data/traces/h200-pytorch/gpt-lumos.pb.zst
base="--gpu H200-SXM-141GB --base heads=16,seq=1024,mbs=8,dp=1,world=1"
echo "| real trace | --set | GPUs | measured ms | estimated ms | graph's share of the GPU-busy time | memory per GPU GB |"
echo "|---|---|---:|---:|---:|---:|---:|"
row() {
  python3 -c '
import json, sys
d = json.loads(sys.argv[3])
a = d["after"]
print("| %s | %s | %d | %.2f | %.2f | %.0f %% | %.1f |" % (sys.argv[1], sys.argv[2], a["tp"] * a["pp"] * a["dp"],
      d["measured_iteration_s"] * 1e3, d["estimated_iteration_s"] * 1e3,
      100 * d["simulated_before_s"] / d["measured_gpu_busy_s"], d["memory_after_gb"]))
' "$1" "$2" "$3"
}
for set in tp=2 tp=4 pp=2 tp=2,pp=2,dp=2,micro_batches=4 pp=2,vp=2,micro_batches=4; do
  # shellcheck disable=SC2086
  row gpt-lumos "$set" "$("$lm" estimate "$gpt" $base --set "$set" --json)"
done
"$lm" import kineto tests/data/megatron-tp8-a100/*.json.gz -o "$work/megatron" >/dev/null
row megatron-tp8-a100 tp=4,pp=2 "$("$lm" estimate "$work/megatron" --gpu A100-SXM4-80GB --set tp=4,pp=2 --json)"
row megatron-tp8-a100 tp=2,pp=4 "$("$lm" estimate "$work/megatron" --gpu A100-SXM4-80GB --set tp=2,pp=4 --json)"
