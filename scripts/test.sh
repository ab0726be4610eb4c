#!/usr/bin/env bash
# Runs Kiln's test suite: setup (idempotent), a warnings-as-errors build in
# build/, every ctest test (GPU-labelled tests skip themselves when no device
# is present), then a short run of every fuzz target (scripts/fuzz.sh).
#   bash scripts/test.sh                # what CI runs
#   bash scripts/test.sh --quick        # the build and its ctest tests only
#   bash scripts/test.sh --sanitizers   # also ASan+UBSan and TSan (scripts/sanitize.sh)
# Other arguments go to the plain ctest run (e.g. -R Cache).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
sanitizers=0
args=()
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    --sanitizers) sanitizers=1 ;;
    *) args+=("$a") ;;
  esac
done
start=$SECONDS
stage() { echo "=== test.sh: $1 ($((SECONDS - start)) s so far)"; }

stage "setup and the warnings-as-errors build"
bash scripts/setup.sh
cmake --preset ci >/dev/null
cmake --build build
stage "ctest"
ctest --preset ci -j "$(nproc)" ${args[@]+"${args[@]}"}
if ((quick)); then exit 0; fi

stage "fuzzing, ${KILN_FUZZ_SECONDS:-10} s per target"
bash scripts/fuzz.sh "${KILN_FUZZ_SECONDS:-10}"
if ((sanitizers)); then
  stage "ASan + UBSan"
  bash scripts/sanitize.sh asan
  stage "TSan"
  bash scripts/sanitize.sh tsan
fi
stage "done"
