#!/usr/bin/env bash
# What finalists cost and what warm start gains, on the shipped tiled CPU
# GEMM (gemm_f32_tiled: 60 configs, so TARGET can be tuned exhaustively)
# (docs/benchmarks.md, "Finalists and warm start"), side by side in one run.
#
# Finalists: the same budgeted random search of TARGET, from the same warm
# artifact cache (so neither run compiles), with --finalists 0 and 3,
# interleaved over ROUNDS rounds: wall time, the re-measurement's time, and
# how often the two runs' winners differ.
# Warm start: the neighbour NEAR is tuned first (its winner goes into the
# tuning cache); then TARGET is tuned by the same random search with
# --warm-start 0 and 3, each from a copy of that cache. Reported: configs
# measured until the best so far is within 5% of TARGET's exhaustive best
# (from an exhaustive tune of TARGET), for each seed; "-" when never.
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
best = json.load(open(f"{work}/exhaustive.json"))["winner"]["median_s"]
near = json.load(open(f"{work}/near.json"))["winner"]["config"]

def config_text(c):
    return ",".join(f"{k}={str(v).lower()}" for k, v in sorted(c.items()))

def configs_to_reach(run):
    report = json.load(open(f"{run}/warm.json"))
    median = {config_text(c["config"]): c.get("median_s") for c in report["configs"]}
    spans = [e for e in json.load(open(f"{run}/trace.json"))["traceEvents"]
             if e.get("ph") == "X" and e.get("cat") == "benchmark"]
    spans.sort(key=lambda e: e["ts"])
    best_so_far = None
    for i, e in enumerate(spans, 1):
        m = median.get(e["name"])
        if m is not None and (best_so_far is None or m < best_so_far):
            best_so_far = m
        if best_so_far is not None and best_so_far <= 1.05 * best:
            return i
    return None

rows = {"off": [], "on": []}
for r in range(1, rounds + 1):
    for mode in ("off", "on"):
        run = f"{work}/{mode}-{r}"
        fin = json.load(open(f"{run}/fin.json"))
        rows[mode].append((fin["stats"]["wall_seconds"], fin["stats"]["finalist_seconds"],
                           config_text(fin["winner"]["config"]), configs_to_reach(run)))

print(f"gemm_f32_tiled target 384^3, exhaustive best {best*1e3:.3f} ms; "
      f"neighbour 256^3 winner {config_text(near)}")
print(f"random search, {budget} configs, {rounds} interleaved rounds (seeds 1..{rounds}):")
for mode, label in (("off", "--finalists 0"), ("on", "--finalists 3")):
    wall = statistics.median(x[0] for x in rows[mode])
    fin = statistics.median(x[1] for x in rows[mode])
    print(f"  {label}: median wall {wall:.2f} s, of which finalists {fin:.2f} s")
changed = sum(rows["off"][i][2] != rows["on"][i][2] for i in range(rounds))
print(f"  winner changed by finalists in {changed} of {rounds} rounds")
for mode, label in (("off", "--warm-start 0"), ("on", "--warm-start 3")):
    reach = [x[3] for x in rows[mode]]
    shown = " ".join("-" if n is None else str(n) for n in reach)
    print(f"  {label}: configs measured to reach 5% of the best, per seed: {shown}")
PY
