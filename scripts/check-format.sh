#!/usr/bin/env bash
# Fails when a tracked C++ file differs from clang-format's output (.clang-format: Google, 100
# columns). Fix with: git ls-files '*.cc' '*.h' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror
echo "format: clean"
