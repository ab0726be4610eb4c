#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine, builds Kiln (release, in
# build/) and runs its main job. Safe to run again: setup and build are
# incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build build --target kiln_cli
echo
./build/bin/kiln info
