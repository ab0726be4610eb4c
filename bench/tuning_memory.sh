#!/usr/bin/env bash
# What finalists cost and what warm start gains, on the shipped CPU GEMM
# (gemm_f32, 13,104 configs on an AVX-512 machine: only a budgeted search can tune it), side by
# side in one run (docs/benchmarks.md, "Finalists and warm start").
#
# For each seed, four budgeted random searches of TARGET, interleaved:
# - finalists: --finalists 0 and 3 (no warm start), from empty caches:
#   wall time, the re-measurement's time, the winner's quality;
# - warm start: --warm-start 0 and 3 (no finalists), each from a copy of a
#   cache in which the neighbour NEAR was tuned first (its winner is the
#   seed): the best quality after 2 configs (the default and one more) and
#   after the budget, and the configs measured until quality 0.9.
# Quality is judged by one table for every run: each config's fastest
# repetition over all runs at TARGET (a reference search of REF configs
# included), so a run's own noise cannot flatter it; quality = the
# table's best / the config's time there.
# Usage: bash bench/tuning_memory.sh [SEEDS] [BUDGET] [REF]   (build/bin/kiln must exist)
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-7}
budget=${2:-12}
ref=${3:-48}
kiln=$PWD/build/bin/kiln
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
target="M=384,N=384,K=384"
near="M=256,N=256,K=256"
tune="$kiln tune --kernel gemm_f32 --backend cpu --search random --json"

KILN_CACHE_DIR=$work/ref $tune --shape $target --max-configs "$ref" --seed 1000 \
  --finalists 0 --warm-start 0 >"$work/ref.json"
KILN_CACHE_DIR=$work/base $tune --shape $near --max-configs "$ref" --seed 2000 \
  --finalists 0 --warm-start 0 >"$work/near.json"

at="--shape $target --max-configs $budget"
for s in $(seq "$seeds"); do
  for n in 0 3; do
    run=$work/$s-$n
    mkdir -p "$run"
    KILN_CACHE_DIR=$run/fin $tune $at --seed "$s" --finalists "$n" --warm-start 0 >"$run/fin.json"
    cp -r "$work/base" "$run/warm"
    KILN_CACHE_DIR=$run/warm $tune $at --seed "$s" --finalists 0 --warm-start "$n" \
      --trace "$run/trace.json" >"$run/warm.json"
  done
done

python3 - "$work" "$seeds" "$budget" "$ref" <<'PY'
import glob, json, statistics, sys
work, seeds, budget, ref = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

def text(c):
    return ",".join(f"{k}={str(v).lower()}" for k, v in sorted(c.items()))

# The judge: every config's fastest repetition in any run at TARGET (on a
# shared machine the fastest is what the config can do, the median also
# what the neighbours did).
table = {}
for f in [f"{work}/ref.json"] + glob.glob(f"{work}/*-*/*.json"):
    if f.endswith("trace.json"):
        continue
    for c in json.load(open(f))["configs"]:
        if c.get("min_s"):
            key = text(c["config"])
            table[key] = min(table.get(key, float("inf")), c["min_s"])
best = min(table.values())
quality = lambda key: best / table[key]

def curve(run):
    """Table qualities of the configs a run measured, in the order it measured them."""
    spans = [e for e in json.load(open(f"{run}/trace.json"))["traceEvents"]
             if e.get("ph") == "X" and e.get("cat") == "benchmark"]
    spans.sort(key=lambda e: e["ts"])
    return [quality(e["name"]) for e in spans if e["name"] in table]

def reach(qs, goal):
    so_far = 0.0
    for i, q in enumerate(qs, 1):
        so_far = max(so_far, q)
        if so_far >= goal:
            return i
    return None

rows = {0: [], 3: []}
for s in range(1, seeds + 1):
    for n in (0, 3):
        run = f"{work}/{s}-{n}"
        fin = json.load(open(f"{run}/fin.json"))
        qs = curve(run)
        rows[n].append({"wall": fin["stats"]["wall_seconds"],
                        "fin": fin["stats"]["finalist_seconds"],
                        "winner": quality(text(fin["winner"]["config"])),
                        "after2": max(qs[:2]), "final": max(qs), "reach": reach(qs, 0.9),
                        "seeded": json.load(open(f"{run}/warm.json"))["stats"]["warm_started"]})

med = lambda n, key: statistics.median(x[key] for x in rows[n])
each = lambda n, key: " ".join("%.2f" % x[key] for x in rows[n])
near = text(json.load(open(f"{work}/near.json"))["winner"]["config"])
near_q = "%.2f" % quality(near) if near in table else "unmeasured"
print(f"gemm_f32, target 384^3, random search of {budget} configs, seeds 1..{seeds} "
      f"(medians over seeds); judged by {len(table)} configs' fastest repetitions, "
      f"best {best*1e3:.3f} ms; neighbour 256^3 ({ref} configs) won with {near}, "
      f"quality {near_q} at 384^3")
for n in (0, 3):
    print(f"  --finalists {n}: wall {med(n, 'wall'):.2f} s (finalists {med(n, 'fin'):.2f} s), "
          f"winner quality {med(n, 'winner'):.2f} (per seed: {each(n, 'winner')})")
for n in (0, 3):
    shown = " ".join("-" if x["reach"] is None else str(x["reach"]) for x in rows[n])
    print(f"  --warm-start {n}: quality after 2 configs {med(n, 'after2'):.2f} "
          f"(per seed: {each(n, 'after2')}), after {budget} {med(n, 'final'):.2f}; "
          f"configs to reach 0.9, per seed: {shown}; seeds measured {med(n, 'seeded'):.0f}")
PY
