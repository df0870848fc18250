#!/usr/bin/env bash
# scripts/build.sh [BUILD_DIR] [extra cmake args...]: set up, configure and build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build_dir=${1:-build}
shift || true
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=${LUMOS_BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
ninja -C "$build_dir"
