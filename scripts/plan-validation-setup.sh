# scripts/plan-validation-setup.sh: sourced by the validate-plan-*.sh scripts (bash, set -euo
# pipefail, run from the repository's root). Builds lumos-model in BUILD_DIR ($1, default build),
# sets $lm and a temporary $work (removed on exit), and writes $work/costs.json: the one cost
# model every planning validation uses, fitted on the shared measured tables
# (../shared/data/costs: aiconfigurator's GEMMs and one-node NCCL), the B200 and GB200 GEMM
# tables of the same source (data/costs, converted as the shared ones were), a real Megatron-LM
# layer's measured elementwise, norm and softmax kernels (data/costs/kernels_a100_megatron.csv)
# and on the attention kernels
# of one real H200 run (gpt-lumos, head size 128), carried to other GPUs by the kernel model's
# efficiency (scripts/validate-attention.sh scores that fit). Nothing a validation scores is read.
build=${1:-build}
LUMOS_TARGETS="lumos-model" bash scripts/build.sh "$build" >/dev/null
lm="$build/modeler/tools/lumos-model"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$lm" costs fit ../shared/data/costs data/costs ../shared/data/traces/h200-pytorch/gpt-lumos.pb.zst \
  --gpu H200-SXM-141GB --attention batch=8,heads=16,seq_q=1024,head_dim=128 \
  -o "$work/costs.json" >/dev/null
