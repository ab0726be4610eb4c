#!/usr/bin/env bash
# What finalists cost and what warm start gains, on the shipped tiled CPU
# GEMM (gemm_f32_tiled: 60 configs, so TARGET can be tuned exhaustively)
# (docs/benchmarks.md, "Finalists and warm start"), side by side in one run.
#
# Finalists: the same budgeted random search of TARGET, from the same warm
# artifact cache (so neither run compiles), with --finalists 0 and 3,
# interleaved over ROUNDS rounds: wall time, the re-measurement's time, and
# the winner's time in TARGET's exhaustive table.
# Warm start: the neighbour NEAR is tuned first (its winner goes into the
# tuning cache); then TARGET is tuned by the same random search with
# --warm-start 0 and 3, each from a copy of that cache. Reported, judged by
# TARGET's exhaustive table (one fixed measurement of every config, so a
# run's own noise cannot flatter it): the best found after 3 configs and
# after the budget, and the configs measured until one within 10% of the
# best ("-": never).
# Usage: bash bench/tuning_memory.sh [ROUNDS] [BUDGET]   (build/bin/kiln must exist)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
budget=${2:-12}
kiln=$PWD/build/bin/kiln
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
target="M=384,N=384,K=384"
near="M=256,N=256,K=256"
tune="$kiln tune --kernel gemm_f32_tiled --backend cpu --json"

# The reference: TARGET's exhaustive best, in a cache of its own (this also
# fills the artifact cache every later run starts from, so no run below
# compiles). Then the neighbour's record, in the cache the warm runs copy.
KILN_CACHE_DIR=$work/ref $tune --shape $target --finalists 0 --warm-start 0 >"$work/exhaustive.json"
mkdir -p "$work/base" && cp -r "$work/ref/artifacts" "$work/base/"
KILN_CACHE_DIR=$work/base $tune --shape $near --finalists 0 --warm-start 0 >"$work/near.json"

search="--shape $target --search random --max-configs $budget"
for r in $(seq "$rounds"); do
  for mode in off on; do
    run=$work/$mode-$r
    mkdir -p "$run/fin"
    cp -r "$work/ref/artifacts" "$run/fin/"
    cp -r "$work/base" "$run/warm"
    n=$([ "$mode" = on ] && echo 3 || echo 0)
    # Finalists alone: no tuning records in this cache, so no warm start.
    KILN_CACHE_DIR=$run/fin $tune $search --seed "$r" --finalists "$n" --warm-start 0 \
      >"$run/fin.json"
    # Warm start alone: the neighbour's record in the cache, the order in
    # which configs were measured in the trace.
    KILN_CACHE_DIR=$run/warm $tune $search --seed "$r" --finalists 0 --warm-start "$n" \
      --trace "$run/trace.json" >"$run/warm.json"
  done
done

python3 - "$work" "$rounds" "$budget" <<'PY'
import json, sys, statistics
work, rounds, budget = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def text(c):
    return ",".join(f"{k}={str(v).lower()}" for k, v in sorted(c.items()))

# The judge of every run: TARGET's exhaustive table, one fixed measurement
# of every config, so noise in a run's own timings cannot flatter it.
table = {text(c["config"]): c["median_s"]
         for c in json.load(open(f"{work}/exhaustive.json"))["configs"] if c.get("median_s")}
best = min(table.values())
near = json.load(open(f"{work}/near.json"))["winner"]["config"]

def warm_curve(run):
    """Table times of the configs a run measured, in the order it measured them."""
    spans = [e for e in json.load(open(f"{run}/trace.json"))["traceEvents"]
             if e.get("ph") == "X" and e.get("cat") == "benchmark"]
    spans.sort(key=lambda e: e["ts"])
    return [table[e["name"]] for e in spans if e["name"] in table]

def reach(curve, within):
    so_far = float("inf")
    for i, t in enumerate(curve, 1):
        so_far = min(so_far, t)
        if so_far <= within * best:
            return i
    return None

def best_after(curve, n):
    return best / min(curve[:n]) if curve else 0.0

rows = {"off": [], "on": []}
for r in range(1, rounds + 1):
    for mode in ("off", "on"):
        run = f"{work}/{mode}-{r}"
        fin = json.load(open(f"{run}/fin.json"))
        curve = warm_curve(run)
        rows[mode].append({"wall": fin["stats"]["wall_seconds"],
                           "fin": fin["stats"]["finalist_seconds"],
                           "winner": best / table[text(fin["winner"]["config"])],
                           "reach": reach(curve, 1.10), "after3": best_after(curve, 3),
                           "final": best_after(curve, len(curve))})

med = lambda mode, key: statistics.median(x[key] for x in rows[mode])
print(f"gemm_f32_tiled, target 384^3: exhaustive best {best*1e3:.3f} ms over {len(table)} configs; "
      f"neighbour 256^3 won with {text(near)}")
print(f"random search of {budget} configs, {rounds} interleaved rounds (seeds 1..{rounds}), "
      f"medians over rounds; quality = exhaustive best / the config's time in the exhaustive table")
for mode, label in (("off", "--finalists 0"), ("on", "--finalists 3")):
    print(f"  {label}: wall {med(mode, 'wall'):.2f} s (finalists {med(mode, 'fin'):.2f} s), "
          f"winner quality {med(mode, 'winner'):.2f} "
          f"(per round: {' '.join('%.2f' % x['winner'] for x in rows[mode])})")
for mode, label in (("off", "--warm-start 0"), ("on", "--warm-start 3")):
    shown = " ".join("-" if x["reach"] is None else str(x["reach"]) for x in rows[mode])
    print(f"  {label}: quality after 3 configs {med(mode, 'after3'):.2f}, after {budget} "
          f"{med(mode, 'final'):.2f}; configs to reach 0.91 (within 10%), per seed: {shown}")
PY
