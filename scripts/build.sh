#!/usr/bin/env bash
# scripts/build.sh [BUILD_DIR] [extra cmake args...]: set up, configure and build.
# LUMOS_TARGETS="a b" builds only those targets (default: everything).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build_dir=${1:-build}
shift || true
# ccache, when installed, makes rebuilds in other checkouts (worktrees, clean clones) cheap; it
# is optional and never installed here.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=${LUMOS_BUILD_TYPE:-RelWithDebInfo} \
  "${launcher[@]}" "$@" >/dev/null
# shellcheck disable=SC2086  # LUMOS_TARGETS is a word list on purpose.
ninja -C "$build_dir" ${LUMOS_TARGETS:-}
