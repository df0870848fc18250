#!/usr/bin/env bash
# The main job on the bundled example: an 8-rank DLRM training step (8x V100), recorded with the
# PyTorch profiler and imported into Lumos traces (examples/dlrm-8rank). Builds first.
set -euo pipefail
cd "$(dirname "$0")/.."
LUMOS_TARGETS=lumos-model bash scripts/build.sh build >/dev/null
mkdir -p out
set -x
build/modeler/tools/lumos-model inspect examples/dlrm-8rank
build/modeler/tools/lumos-model export examples/dlrm-8rank -o out/dlrm-8rank.json
{ set +x; } 2>/dev/null
echo "Open out/dlrm-8rank.json in https://ui.perfetto.dev to see the timeline of all 8 ranks."
