#!/usr/bin/env bash
# scripts/bench-estimate.sh [BUILD_DIR]: `lumos-model estimate --sweep` on the 512-rank synth
# job (docs/performance.md, "Estimation"): the wall time of 1 and of 16 configurations, so the
# difference is the sweep's own rate (configurations per minute) without the one-off setup
# (load, structure, the trace's calibration, the base replay). Three runs each; medians.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
LUMOS_TARGETS="lumos-model" bash scripts/build.sh "$build" >/dev/null
lm="$build/modeler/tools/lumos-model"
job=$(mktemp -d)
trap 'rm -rf "$job"' EXIT
"$lm" synth examples/dlrm-8rank -o "$job/synth512" --ranks 512 --iterations 5 >/dev/null
one="gpu=A100-SXM4-80GB"
many="gpu=A100-SXM4-80GB,H100-SXM5-80GB,H200-SXM-141GB,B200;net=ib100,ib200,ib400,ib800"
run() {
  local start end
  start=$(date +%s.%N)
  "$lm" estimate "$job/synth512" --gpu V100-SXM2-32GB --sweep "$1" >/dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
median() { sort -n | sed -n 2p; }
t1=$(for i in 1 2 3; do run "$one"; done | median)
t16=$(for i in 1 2 3; do run "$many"; done | median)
echo "1 configuration: ${t1} s; 16 configurations: ${t16} s (medians of 3)"
echo "sweep rate: $(echo "scale=1; 15 * 60 / ($t16 - $t1)" | bc) configurations/minute after the setup"
