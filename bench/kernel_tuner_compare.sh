#!/usr/bin/env bash
# Kiln's cold tune of the 60-config CPU GEMM space (gemm_f32_tiled, the
# template of the first shipped gemm_f32) against Kernel Tuner's on the same
# template and configs, M=N=K=SIZE, THREADS threads, rounds interleaved
# (the order alternating). Kiln runs with early stop (the default) and
# without (--early-stop 0). Each Kiln run starts from an empty cache.
#   bench/kernel_tuner_compare.sh [SIZE=512] [ROUNDS=3] [THREADS=2]
# Kernel Tuner 1.5.0 goes into a venv under build/ (PyPI), made on first use.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=${1:-512}
rounds=${2:-3}
threads=${3:-2}
kiln=${KILN:-$root/build/bin/kiln}
. "$root/bench/kt_venv.sh"
if [ "$(nproc)" != "$threads" ]; then
  echo "note: Kiln's CPU device runs one block runner per hardware thread ($(nproc)); Kernel" \
       "Tuner's launcher uses $threads" >&2
fi

kiln_run() {  # $1: early-stop factor; prints "wall best_ms compile_s bench_s"
  local cache out start end
  cache=$(mktemp -d)
  start=$(date +%s.%N)
  out=$(KILN_CACHE_DIR=$cache "$kiln" tune --kernel gemm_f32_tiled --backend cpu \
        --shape "M=$size,N=$size,K=$size" --early-stop "$1" --json)
  end=$(date +%s.%N)
  rm -rf "$cache"
  python3 -c '
import json, sys
r = json.loads(sys.argv[1]); s = r["stats"]; w = r["winner"]
print(round(float(sys.argv[3]) - float(sys.argv[2]), 3), w["median_s"] * 1e3, s["compile_seconds"],
      s["benchmark_seconds"], json.dumps(w["config"], separators=(",", ":")))' \
    "$out" "$start" "$end"
}

kt_run() {
  (cd "$(mktemp -d)" && "$venv/bin/python" "$root/bench/kernel_tuner_gemm.py" "$size" "$threads" \
     2>/dev/null | tail -1) | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
print(r["wall_seconds"], r["best_ms"], r["compile_seconds"], r["benchmark_seconds"],
      json.dumps(r["best"], separators=(",", ":")))'
}

echo "# M=N=K=$size, $threads threads, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "round tool wall_s best_ms compile_s benchmark_s best"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then order="kt kiln kiln0"; else order="kiln0 kiln kt"; fi
  for t in $order; do
    case $t in
      kt) echo "$r kernel_tuner $(kt_run)" ;;
      kiln) echo "$r kiln $(kiln_run 1.5)" ;;
      kiln0) echo "$r kiln_no_early_stop $(kiln_run 0)" ;;
    esac
  done
done
