#!/usr/bin/env bash
# Installs what Lumos needs to build and test on Debian 12 (run as root; idempotent: it only
# calls apt-get when a package is missing). CUDA 13 under /usr/local/cuda is optional.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libprotobuf-dev protobuf-compiler
  libzstd-dev zstd
  libsimdjson-dev zlib1g-dev libre2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang clang-format clang-tidy git
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python for the tests that load outputs into real tools (DuckDB): its own script.
bash "$(dirname "$0")/setup-python.sh"
