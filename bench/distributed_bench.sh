#!/usr/bin/env bash
# Tuning one problem across 1, 2 and 4 MPI ranks on this machine, side by
# side in one run (docs/benchmarks.md): wall time of the job, configs
# benchmarked per rank, and the time ranks spent in collectives (waiting
# for each other included), for the `parallel` and `merge` strategies,
# interleaved over ROUNDS rounds, each from an empty cache.
# Usage: bash bench/distributed_bench.sh [ROUNDS]   (build/bin/kiln must exist)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
kiln=$PWD/build/bin/kiln
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tune="$kiln tune --kernel gemm_f32 --backend cpu --shape M=128,N=128,K=128 --max-configs 33 --json"
declare -A wall bench coll
for r in $(seq "$rounds"); do
  for strategy in parallel merge; do
    for np in 1 2 4; do
      run=$work/$strategy-$np-$r
      mkdir -p "$run"
      echo "exec >$run/out.\$OMPI_COMM_WORLD_RANK; exec $tune --distributed $strategy" >"$run/rank.sh"
      t0=$(date +%s%N)
      KILN_CACHE_DIR=$run/cache mpirun --oversubscribe -np "$np" sh "$run/rank.sh" 2>/dev/null
      t1=$(date +%s%N)
      key=$strategy-$np
      wall[$key]=$(( ${wall[$key]:-0} + t1 - t0 ))
      read -r b c < <(python3 - "$run" "$np" <<'PY'
import json, sys
run, np = sys.argv[1], int(sys.argv[2])
reports = [json.load(open(f"{run}/out.{r}")) for r in range(np)]
print(sum(r["benchmarked"] for r in reports) / np, max(r["collective_seconds"] for r in reports))
PY
)
      bench[$key]=$(python3 -c "print(${bench[$key]:-0} + $b)")
      coll[$key]=$(python3 -c "print(${coll[$key]:-0} + $c)")
    done
  done
done
echo "gemm_f32 128^3, 33 configs, mean of $rounds interleaved rounds ($(nproc) cores):"
printf "%-9s %5s %10s %18s %16s\n" strategy ranks wall_ms benchmarked/rank collectives_ms
for strategy in parallel merge; do
  for np in 1 2 4; do
    key=$strategy-$np
    python3 -c "print(f'%-9s %5d %10.0f %18.1f %16.0f' % ('$strategy', $np, ${wall[$key]}/$rounds/1e6, ${bench[$key]}/$rounds, ${coll[$key]}/$rounds*1e3))"
  done
done
