#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine, builds Kiln (release, in
# build/) and runs its main job: autotuning a GEMM on the best backend this
# machine has (CUDA when a device is present, else the CPU through Clang and
# LLVM), first from a cold cache, then the same command again, which starts
# warm from the cache on disk. Safe to run again: setup and build are
# incremental, and the demo's cache (build/demo-cache) is cleared every time.
#
#   KILN_DEMO_BUILD=DIR   use an existing build directory (skips setup and
#                         the preset configure; for trying the demo quickly)
#   KILN_DEMO_SHAPE=...   the GEMM shape (default M=512,N=512,K=512)
#   KILN_DEMO_CONFIGS=N   configs measured at most (default 16)
set -euo pipefail
cd "$(dirname "$0")/.."

build=${KILN_DEMO_BUILD:-build}
if [[ -z ${KILN_DEMO_BUILD:-} ]]; then
  bash scripts/setup.sh
  cmake --preset release >/dev/null
fi
# kiln-bench-worker: benchmarks run in a worker process, so a config that
# crashes costs its worker, not the tuning run (docs/reliability.md).
cmake --build "$build" --target kiln_cli kiln_bench_worker
kiln="$build/bin/kiln"

echo
"$kiln" info

# A private cache, emptied first, so the first run is really cold and the
# user's own cache (~/.cache/kiln) is neither used nor touched.
export KILN_CACHE_DIR="$PWD/$build/demo-cache"
rm -rf "$KILN_CACHE_DIR"
# Four configs per compiled program: benchmarks start while later programs
# still compile, so the overlap shows (with 8, the default, 16 configs on 2
# cores land in two programs at once and nearly nothing overlaps).
tune=("$kiln" tune --kernel gemm --backend auto
      --shape "${KILN_DEMO_SHAPE:-M=512,N=512,K=512}"
      --max-configs "${KILN_DEMO_CONFIGS:-16}" --group-size 4)

banner() { printf '\n==== %s\n$ %s\n\n' "$1" "${tune[*]}"; }

banner "1/2 cold start: empty cache ($KILN_CACHE_DIR); every config is compiled and benchmarked"
"${tune[@]}"

banner "2/2 the same command again: warm start from the cache on disk"
second=$("${tune[@]}")
printf '%s\n' "$second"

# The report's stats line reads "cache H hit(s), M miss(es); ... C compiled".
hits=$(sed -n 's/^stats: cache \([0-9]*\) hit.*/\1/p' <<<"$second")
compiled=$(sed -n 's/.*configs, \([0-9]*\) compiled.*/\1/p' <<<"$second")
echo
if grep -q '^source: disk' <<<"$second" && [[ ${compiled:-1} == 0 ]]; then
  echo "warm start: ${hits:-?} cache hit(s), 0 compiles, 0 benchmarks: the winner came from"
  echo "the tuning cache on disk, as it will in any later process with this toolchain,"
  echo "device and environment."
else
  echo "warm start NOT observed (expected 'source: disk' and 0 compiled): see above" >&2
  exit 1
fi
