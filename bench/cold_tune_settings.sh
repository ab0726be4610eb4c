#!/usr/bin/env bash
# A cold `kiln tune` of the 60-config CPU GEMM space (gemm_f32_tiled, the
# space of bench/kernel_tuner_compare.sh) under several measurement
# settings, interleaved rounds, each run from an empty cache: its wall
# time, the winner's median, the compile and benchmark seconds and the
# winning config (docs/lab/pipeline-journal.md, "A cold CPU tune against
# Kernel Tuner").
#   SETS='--early-stop 1.5;--early-stop 1.2 --target-s 0.02' ROUNDS=3 SIZE=512 \
#     bash bench/cold_tune_settings.sh
# SETS: ';'-separated `kiln tune` flag sets (default: the two above).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kiln=${KILN:-$root/build/bin/kiln}
size=${SIZE:-512}
run() {
  local cache out start end
  cache=$(mktemp -d)
  start=$(date +%s.%N)
  # shellcheck disable=SC2068  # a flag set splits into its flags
  out=$(KILN_CACHE_DIR=$cache "$kiln" tune --kernel gemm_f32_tiled --backend cpu \
        --shape "M=$size,N=$size,K=$size" $@ --json)
  end=$(date +%s.%N)
  rm -rf "$cache"
  python3 -c '
import json, sys
r = json.loads(sys.argv[1]); s = r["stats"]; w = r["winner"]
print(round(float(sys.argv[3]) - float(sys.argv[2]), 3), round(w["median_s"] * 1e3, 3),
      round(s["compile_seconds"], 2), round(s["benchmark_seconds"], 2),
      json.dumps(w["config"], separators=(",", ":")))' "$out" "$start" "$end"
}
IFS=';' read -ra sets <<<"${SETS:---early-stop 1.5;--early-stop 1.2 --target-s 0.02}"
echo "# M=N=K=$size, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "round [flags] wall_s winner_ms compile_s benchmark_s winner"
for r in $(seq 1 "${ROUNDS:-3}"); do
  for s in "${sets[@]}"; do echo "$r [$s] $(run "$s")"; done
done
