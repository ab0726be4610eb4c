#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset: clang 19 with ASan and
# UBSan) and runs each for SECONDS (default 20) from its seed corpus in
# fuzz/corpus/. A crash leaves its input in build-fuzz/artifacts/ and fails.
#   bash scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
bash scripts/setup.sh
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
mkdir -p build-fuzz/artifacts
status=0
for target in tuning_file artifact_entry placeholders config_space worker_message \
    recorded_space; do
  # A scratch copy of the seeds: libFuzzer adds what it finds to its corpus
  # directory, and the checked-in seeds stay small.
  work=build-fuzz/corpus/$target
  mkdir -p "$work"
  cp -n fuzz/corpus/$target/* "$work"/ 2>/dev/null || true
  echo "fuzz: $target for ${seconds}s"
  if ! build-fuzz/bin/fuzz_$target "$work" -max_total_time="$seconds" -max_len=8192 \
      -artifact_prefix=build-fuzz/artifacts/$target- -print_final_stats=1 2>build-fuzz/$target.log; then
    status=1
    echo "fuzz: $target FAILED; the last lines of build-fuzz/$target.log:"
    tail -30 build-fuzz/$target.log
  fi
  grep -E "^stat::number_of_executed_units|^Done" build-fuzz/$target.log | tr '\n' ' '
  echo
done
exit $status
