#!/usr/bin/env bash
# scripts/calibrate-host-step.sh [BUILD_DIR]: the calibration behind kHostStepNs
# (modeler/plan/pass_work.h), the host time a step that `estimate --model` and `search` add:
# the median, over the calibration rows, of the published step less the simulated one with
# that term at 0 (--host-step-ms 0). Calibration rows: MLPerf Training v5.1 Llama 3.1 8B on
# B200 of one submitter, the University of Florida (mlcommons/training_results_v5.1 @ 441d65f4,
# University-of-Florida/results/hpg.dgxb200x8.n{1,2,4,8,16,32}/llama31_8b and
# benchmarks/llama31_8b/implementations/hpg.dgxb200x8/config_DGXB200_*_8b.sh: tp 1, pp 1, mbs 2
# without cp, mbs 1 with cp 2, FP8 tensorwise with FP8 weight gathers, full-iteration CUDA
# graph; the step the median over ten logs of the median `train_step_time`). These rows are
# calibration only: scripts/validate-plan-bridge.sh prints them apart and scores every other
# row. Same cost model as the planning validations. Deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/plan-validation-setup.sh "$@"  # $lm, $work, $work/costs.json
llama8=llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256
# name | GPUs | cp | mbs | GBS | published step s
rows="n1|8|1|2|16|0.5441
n2|16|1|2|32|0.5749
n4|32|2|1|16|0.1886
n8|64|2|1|32|0.1895
n16|128|2|1|64|0.1928
n32|256|2|1|128|0.2211"
echo "| calibration row (B200) | GPUs | published step s | simulated without host s | residual s |"
echo "|---|---:|---:|---:|---:|"
echo "$rows" | while IFS='|' read -r name gpus cp mbs gbs step; do
  "$lm" estimate --model "$llama8" --gpu B200 --dtype fp8 --costs "$work/costs.json" \
    --host-step-ms 0 --set "tp=1,pp=1,cp=$cp,dp=$((gpus / cp)),mbs=$mbs,gbs=$gbs,zero=1,recompute=none,grad_sync_bytes=2,fp8_current_scaling=1,fp8_param_gather=1" \
    --json | python3 -c '
import json, sys
name, gpus, step = sys.argv[1], sys.argv[2], float(sys.argv[3])
sim = json.load(sys.stdin)["searches"][0]["ranked"][0]["simulated_step_s"]
print("| U. Florida %s | %s | %.4f | %.4f | %.4f |" % (name, gpus, step, sim, step - sim))
' "$name" "$gpus" "$step"
done | tee "$work/rows"
python3 - "$work/rows" <<'PY'
import statistics, sys
residuals = [float(l.split("|")[5]) for l in open(sys.argv[1])]
print()
print("median residual: %.1f ms (kHostStepNs)" % (1e3 * statistics.median(residuals)))
PY
