#!/usr/bin/env bash
# Installs the Python side of the tests (run by scripts/setup.sh; idempotent): python3 and its
# venv module from Debian when missing, a project-local virtual environment build-pyenv/ (git
# ignores /build*/) and PyPI duckdb pinned in it, for tests/modeler/summarize (the summary
# loaded into a real DuckDB). Only what is missing is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build-pyenv
duckdb_version=2.0.1

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
apt_install() {
  echo "setup-python: installing $*"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@"
}
command -v python3 >/dev/null 2>&1 || apt_install python3
# Debian splits ensurepip (what venv needs) into python3-venv.
python3 -c 'import ensurepip, venv' 2>/dev/null || apt_install python3-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import duckdb, sys; sys.exit(duckdb.__version__ != '$duckdb_version')" \
    2>/dev/null; then
  echo "setup-python: installing duckdb $duckdb_version into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "duckdb==$duckdb_version"
fi
