#!/usr/bin/env bash
# Runs Kiln's test suite, as CI does (.ci/run):
#   1. setup (idempotent);
#   2. ASan + UBSan: everything (library, tools, tests, examples, benchmarks)
#      built with warnings as errors in build-asan/, then every ctest test
#      under the sanitizers;
#   3. TSan: the library, tools and tests in build-tsan/, then the unit and
#      integration tests under it (the pool, the pipeline, the caches and the
#      worker processes are concurrent);
#   4. a short run of every fuzz target (scripts/fuzz.sh);
#   5. the Python package: built once as the binary wheel a user installs
#      (scripts/build_wheel.sh, a unity build), that wheel installed into
#      .venv, then its pytest suite (python/tests, docs/python.md's
#      snippets, examples/python; python/tests/test_wheel.py installs the
#      same wheel into a fresh venv with the system's LLVM hidden).
# GPU-labelled tests are left out of the sanitizer runs: the driver is not
# instrumented (run them from a release build on a GPU: docs/gpu.md).
# Skips: each ctest and pytest stage writes JUnit XML to build-test-results/,
# and scripts/skip_report.py reads the class every skip names
# (tests/common/skip.hpp). A skip for a component setup installs (hiredis,
# redis-server, Open MPI, libzip, OpenBLAS, LLVM), or one with no known
# class, fails the run right after its stage, naming the tests and the fix.
# Only a missing GPU (and what needs one), the CUDA toolkit (setup cannot
# install it), data outside the repository (../shared) and conditions of the
# harness (sanitizer, not root, KILN_TUNING=0, the host) may skip; the run
# ends with the count of skips by reason. KILN_TEST_REQUIRE=CLASS,... makes
# allowed classes fail too (.ci/run: cuda-toolkit). --quick allows every
# skip, and still counts them and says which would fail the full run.
# Each sanitizer build replaces a release build in CI rather than adding to
# it: two instrumented builds at -O1 cost less than one -O3 build plus two.
#   bash scripts/test.sh                # what CI runs
#   bash scripts/test.sh --quick        # release build with -Werror (build/) and its ctest only
#   bash scripts/test.sh --no-tsan      # skip stage 3
#   bash scripts/test.sh --no-fuzz      # skip stage 4
#   bash scripts/test.sh --no-python    # skip stage 5
#   bash scripts/test.sh --python-only  # stage 5 alone
# Other arguments go to every ctest run (e.g. -R Cache).
# KILN_TEST_PRUNE=1 (what .ci/run sets) removes each stage's build directory
# once that stage has passed, so the disk holds one build at a time: the
# ASan build alone is several GB, and a CI run has died of a full disk in the
# TSan build that followed it. Locally the directories stay for incremental
# rebuilds.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
tsan=1
fuzz=1
python=1
python_only=0
args=()
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    --no-tsan) tsan=0 ;;
    --no-fuzz) fuzz=0 ;;
    --no-python) python=0 ;;
    --python-only) python_only=1 ;;
    --sanitizers) ;;  # the default now; kept so older command lines still work
    *) args+=("$a") ;;
  esac
done
start=$SECONDS
stage() { echo "=== test.sh: $1 ($((SECONDS - start)) s so far)"; }
case "${KILN_TEST_PRUNE:-0}" in
  1 | true | yes | on) prune=1 ;;
  0 | false | no | off | "") prune=0 ;;
  *)
    echo "test.sh: KILN_TEST_PRUNE='$KILN_TEST_PRUNE' is neither on nor off; set it to 1 to" \
      "remove each build directory once its stage has passed, or 0 (the default) to keep them" >&2
    exit 2
    ;;
esac
# The disk a run needs at its peak, measured from a clean clone with about
# 2 GB to spare (docs/reliability.md, "Disk"): the ASan build and its
# tests' files (3.7-4.2 GB), then, without pruning, the TSan and fuzz
# builds beside it (1.1 GB more).
need_gb=6
((prune)) || need_gb=7
# --quick (a release build, 0.2 GB) and --python-only need little.
((quick || python_only)) && need_gb=1
free_gb=$(($(df -Pk . | awk 'NR == 2 {print $4}') / 1048576))
echo "test.sh: ${free_gb} GiB free here; this run needs about ${need_gb} GiB"
if ((free_gb < need_gb)); then
  echo "test.sh: warning: only ${free_gb} GiB free, the run may fail with 'No space left on" \
    "device'. Free space (old build-*/ directories are the usual bulk), or set" \
    "KILN_TEST_PRUNE=1 to remove each build directory once its stage has passed." >&2
fi
# Removes a build directory whose stage has passed, when pruning is on.
prune_build() {
  if ((prune)); then
    echo "test.sh: $1 removed (KILN_TEST_PRUNE=1: its stage passed)"
    rm -rf "$1"
  fi
}

stage "setup"
bash scripts/setup.sh

# Every ctest and pytest stage leaves its results here, for the skip report
# (a stage's output is kept whole up to 64 KiB, so the skip's reason is in it).
results=$PWD/build-test-results
rm -rf "$results"
mkdir -p "$results"
# ctest's arguments for the results of stage $1.
junit() { junit_args=(--output-junit "$results/$1.xml" --test-output-size-passed 65536); }
skip_args=(--require "${KILN_TEST_REQUIRE:-}")
((quick)) && skip_args=(--allow-skips)
python3 scripts/skip_report.py "${skip_args[@]}"  # a misspelt KILN_TEST_REQUIRE stops here
# Fails the run when stage $1 skipped what it may not (silent otherwise).
check_skips() { python3 scripts/skip_report.py --quiet "${skip_args[@]}" "$results/$1.xml"; }
# The count of skips by reason, over every stage; fails as check_skips does.
skip_report() {
  stage "skips"
  python3 scripts/skip_report.py "${skip_args[@]}" "$results"/*.xml
}

# Stage 5: the Python package, built once (release) as the binary wheel a
# user installs, that wheel installed into .venv, then pytest on it. Exit
# code 5 (no tests collected: a filter that selects none) is not a
# failure. A unity build, as the sanitizer builds are: 3 min 41 s here
# against about 7 min 20 s file by file (docs/reliability.md). A user's
# `pip install .` still compiles file by file, as every release build
# does, so `bash scripts/test.sh --quick` is where a file that forgot an
# include fails. Zip level 0 (stored): the wheel is unpacked at once beside it.
# Against `pip install .` the wheel adds the `kiln` command's compile (5
# unity batches, about 125 s of CPU), `auditwheel repair` (about 9 s of
# CPU) and test_wheel.py: 138 s against 94-98 s for the stage without its
# compile at load 7 (docs/reliability.md, "Sanitizers").
python_stage() {
  stage "Python package: the binary wheel, installed into .venv, and pytest"
  KILN_WHEEL_ZIP_LEVEL=0 KILN_WHEEL_PIP_ARGS="--config-settings=cmake.define.CMAKE_UNITY_BUILD=ON \
--config-settings=cmake.define.CMAKE_UNITY_BUILD_BATCH_SIZE=8" bash scripts/build_wheel.sh build-wheel
  local wheel
  wheel=$(ls "$PWD"/build-wheel/kiln-*.whl)
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --force-reinstall "$wheel"
  local rc=0
  KILN_WHEEL=$wheel .venv/bin/python -m pytest -q -rs -p no:cacheprovider \
    --junitxml="$results/pytest.xml" python/tests || rc=$?
  if ((rc == 5)); then
    echo "test.sh: pytest collected no tests"
  elif ((rc != 0)); then
    exit "$rc"
  fi
  check_skips pytest
}
if ((python_only)); then
  python_stage
  skip_report
  stage "done"
  exit 0
fi
if ((quick)); then
  stage "release build with warnings as errors"
  cmake --preset ci >/dev/null
  cmake --build build
  stage "ctest"
  junit release
  ctest --preset ci -j "$(nproc)" "${junit_args[@]}" ${args[@]+"${args[@]}"}
  if ((python)); then python_stage; fi
  skip_report
  stage "done"
  exit 0
fi

stage "ASan + UBSan: build and every test"
junit asan
bash scripts/sanitize.sh asan "${junit_args[@]}" ${args[@]+"${args[@]}"}
check_skips asan
prune_build build-asan
if ((tsan)); then
  stage "TSan: build and the unit and integration tests"
  junit tsan
  bash scripts/sanitize.sh tsan "${junit_args[@]}" ${args[@]+"${args[@]}"}
  check_skips tsan
  prune_build build-tsan
fi
if ((fuzz)); then
  stage "fuzzing, ${KILN_FUZZ_SECONDS:-10} s per target"
  bash scripts/fuzz.sh "${KILN_FUZZ_SECONDS:-10}"
  prune_build build-fuzz
fi
if ((python)); then python_stage; fi
skip_report
stage "done"
