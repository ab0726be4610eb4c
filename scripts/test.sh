#!/usr/bin/env bash
# Runs Kiln's whole test suite: setup (idempotent), a warnings-as-errors
# build in build/, then every ctest test. GPU-labelled tests skip themselves
# when no device is present.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset ci >/dev/null
cmake --build build
ctest --preset ci -j "$(nproc)" "$@"
