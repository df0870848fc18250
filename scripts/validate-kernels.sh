#!/usr/bin/env bash
# scripts/validate-kernels.sh [BUILD_DIR]: the non-GEMM kernel model's validation tables of
# docs/validation.md ("Non-GEMM kernels") on the real traces in ../shared/data/traces
# (bench/kernel_validation.cc; the rules: modeler/models/kernels/kernel_validation.h). Deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
LUMOS_TARGETS="lumos_kernel_validation" bash scripts/build.sh "$build" >/dev/null
"$build/bench/lumos_kernel_validation" ../shared/data/traces
