#!/usr/bin/env bash
# scripts/validate-estimate.sh [BUILD_DIR]: the estimation tables of docs/validation.md
# ("Estimation"): identity (every shared real trace, the bundled example and synthetic GPT jobs
# with --set of their own values against the replay) and the consistency checks on a synthetic
# GPT job (`synth gpt`: a test double for a GPU run). Deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
LUMOS_TARGETS="lumos-model" bash scripts/build.sh "$build" >/dev/null
lm="$build/modeler/tools/lumos-model"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The iteration time of the base and of the estimate (ns), from --json.
times() {
  "$lm" estimate "$@" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["estimate"]
print(d["base"]["iteration_ns"], d["estimate"]["iteration_ns"])'
}
# Every setup value the trace shows, and its own GPU.
own() {
  "$lm" structure "$1" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["setup"]
print(",".join(k + "=" + str(v["value"]) for k, v in s.items() if v.get("value") is not None))'
}

echo "| input | ranks | --set (the trace's own values) | base iteration | estimate | error |"
echo "|---|---|---|---|---|---|"
inputs=()
for t in dlrm-8rank-v100/dlrm_kineto.tar.gz hta-single-rank/control.json.gz \
         hta-single-rank/df_index_resolver.json.gz hta-single-rank/event_sync_trace.json.gz \
         hta-single-rank/nccl_data.json.gz hta-single-rank/rank0.json.gz; do
  name=$(basename "$t" | sed 's/\..*//')
  "$lm" import kineto "../shared/data/traces/$t" -o "$work/$name" >/dev/null
  inputs+=("$work/$name")
done
inputs+=(examples/dlrm-8rank)
"$lm" synth gpt -o "$work/gpt" --set layers=4 >/dev/null
"$lm" synth gpt -o "$work/gpt-nonvtx" --set layers=4 --no-nvtx >/dev/null
inputs+=("$work/gpt" "$work/gpt-nonvtx")
for input in "${inputs[@]}"; do
  set_values=$(own "$input")
  ranks=1
  if [ -d "$input" ]; then ranks=$(find "$input" -name '*.pb.zst' | wc -l); fi
  read -r b e < <(times "$input" --set "${set_values:-mbs=1}" 2>/dev/null || times "$input" --set net=ib400)
  python3 -c "import sys; b,e=$b,$e; print(f'| {sys.argv[1]} | {sys.argv[2]} | {sys.argv[3]} | {b/1e6:.3f} ms | {e/1e6:.3f} ms | {100*(e-b)/b:+.2f} % |')" \
    "$(basename "$input")" "$ranks" "${set_values:-(none known; net=ib400)}"
done

echo
echo "Consistency on synth gpt (layers=4, hidden 1024, 16 heads, seq 1024, mbs 2, 2 micro-batches, tp 2, dp 2, H100):"
echo
echo "| --set | base | estimate | change |"
echo "|---|---|---|---|"
for s in layers=2 layers=8 micro_batches=1 micro_batches=4 dp=4 dp=16 "dp=16,net=ib100" \
         "dp=16,net=ib800" gpu=A100-SXM4-80GB gpu=H200-SXM-141GB gpu=B200 hidden=2048 seq=2048 mbs=4; do
  read -r b e < <(times "$work/gpt" --set "$s")
  python3 -c "b,e=$b,$e; print(f'| $s | {b/1e6:.3f} ms | {e/1e6:.3f} ms | {100*(e-b)/b:+.1f} % |')"
done
