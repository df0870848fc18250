#!/usr/bin/env bash
# scripts/check-tidy.sh BUILD_DIR: clang-tidy (.clang-tidy: bugprone-*, performance-*,
# google-explicit-constructor) on every tracked .cc of the libraries and tools; any warning
# fails. Needs BUILD_DIR configured with CMAKE_EXPORT_COMPILE_COMMANDS=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
files=$(git ls-files 'agent/*.cc' 'base/*.cc' 'modeler/*.cc')
# -Wno-unknown-warning-option: the build's GCC-only flags mean nothing to clang.
printf '%s\n' $files | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build_dir" --quiet \
  --extra-arg=-Wno-unknown-warning-option --warnings-as-errors='*' 2>/dev/null
echo "clang-tidy: clean"
