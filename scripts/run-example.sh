#!/usr/bin/env bash
# The main job on the bundled example, replayed: an 8-rank DLRM training step (8x V100), recorded with the
# PyTorch profiler and imported into Lumos traces (examples/dlrm-8rank). Builds first.
set -euo pipefail
cd "$(dirname "$0")/.."
LUMOS_TARGETS=lumos-model bash scripts/build.sh build >/dev/null
mkdir -p out
set -x
build/modeler/tools/lumos-model replay examples/dlrm-8rank --timeline out/dlrm-8rank.replay.json
build/modeler/tools/lumos-model export examples/dlrm-8rank -o out/dlrm-8rank.json
{ set +x; } 2>/dev/null
echo "Open out/dlrm-8rank.json (the trace) or out/dlrm-8rank.replay.json (measured beside"
echo "replayed, per rank) in https://ui.perfetto.dev."
