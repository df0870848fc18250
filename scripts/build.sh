#!/usr/bin/env bash
# scripts/build.sh [BUILD_DIR] [extra cmake args...]: set up, configure and build.
# LUMOS_TARGETS="a b" builds only those targets (default: everything).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build_dir=${1:-build}
shift || true
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=${LUMOS_BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
# shellcheck disable=SC2086  # LUMOS_TARGETS is a word list on purpose.
ninja -C "$build_dir" ${LUMOS_TARGETS:-}
