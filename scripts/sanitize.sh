#!/usr/bin/env bash
# Builds Kiln under a sanitizer and runs the tests there (scripts/test.sh,
# and so CI, runs both):
#   bash scripts/sanitize.sh asan   # ASan + UBSan (clang 19), -O0, everything incl. examples (build-asan/)
#   bash scripts/sanitize.sh tsan   # TSan (GCC), -O1, library, tools and tests (build-tsan/)
# Both are unity builds with warnings as errors (CMakePresets.json): a unity
# batch instantiates the JSON and gtest templates once instead of once per
# file, which halves the build. Extra arguments go to ctest (e.g. -R Cache).
# The ASan preset links its executables without PIE and compresses their
# debug info: each of its 43 executables holds the whole library with ASan's
# and UBSan's records for every global and check, and under PIE each record
# was also a load-time relocation, about 60 MB per executable (the build's
# executables: 4.4 GB with PIE, 2.7 GB without). The TSan build is left as
# it is, at 0.7 GB in all.
# GPU-labelled tests are left out: they skip without a device anyway, and the
# driver is not instrumented.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: scripts/sanitize.sh asan|tsan [ctest args]}
shift
case "$kind" in
  asan | tsan) ;;
  *) echo "scripts/sanitize.sh: unknown sanitizer '$kind' (use asan or tsan)" >&2; exit 2 ;;
esac
bash scripts/setup.sh
cmake --preset "$kind" >/dev/null
cmake --build --preset "$kind"
# halt_on_error: the first report fails the test that caused it.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The suppressions (scripts/tsan-suppressions.txt) cover races inside NVRTC,
# which is not instrumented, and nothing of Kiln's.
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan-suppressions.txt}
# A failed test runs once more before the stage fails: LeakSanitizer's
# exit-time tracer has crashed once ("Tracer caught signal 11") after an
# NVRTC test had passed, a sanitizer flake no code of ours can fix. A real
# failure fails twice and still fails the stage; the log keeps both runs.
# Under TSan the MPI jobs are left out: Open MPI is not instrumented and its
# progress threads race in ways TSan reports and no code of ours can fix
# (the jobs run under ASan and in the release suite).
exclude=gpu
[[ $kind == tsan ]] && exclude='gpu|distributed'
ctest --preset "$kind" -j "$(nproc)" -LE "$exclude" --repeat until-pass:2 "$@"
