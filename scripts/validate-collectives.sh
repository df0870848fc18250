#!/usr/bin/env bash
# scripts/validate-collectives.sh [BUILD_DIR]: the collective model's validation tables of
# docs/validation.md ("Collective model", Markdown on stdout) from NVIDIA's measured tables in
# ../shared/data/costs: fit the 2- and 4-rank rows and predict the 8-rank rows (H100, A100);
# fit every H100 row and predict every A100 row; each beside its baselines. With --rows after
# BUILD_DIR: every test row and its prediction (CSV) instead.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
LUMOS_TARGETS=lumos_collective_validation bash scripts/build.sh "$build" >/dev/null
"$build/bench/lumos_collective_validation" "$@" ../shared/data/costs/nccl_h100.csv \
  ../shared/data/costs/nccl_a100.csv
