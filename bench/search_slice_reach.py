#!/usr/bin/env python3
"""How a search's budget meets the optimum's slice of a recorded space.

usage: search_slice_reach.py FILE --free P1,P2 [--seeds N] [--first-seed F]
                             [--max-configs M] [--level L] [--kiln PATH]

The slice is every config that shares the optimum's values of all
parameters but the --free ones (for a convolution, the block sizes: the
optimum's tiling, padding and memory choices with any block shape). The
script prints:
- the slice's size and how many of its configs reach --level of the
  optimum, and the chance that M random draws inside the slice hit one:
  a bound for a search that knew the slice from its first config;
- for N seeds of `kiln-lab tune --recorded FILE --max-configs M --seed S`
  (the plan's default strategy), how many configs each run measured in
  the slice, and the share reaching the level, grouped by that count.
Standard library only.
"""
import argparse
import collections
import json
import math
import subprocess

from recorded_file import recorded_times


def run_seed(kiln, path, max_configs, seed):
    out = subprocess.run([kiln, "tune", "--recorded", path, "--max-configs", str(max_configs),
                          "--seed", str(seed), "--json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--free", required=True, help="parameters that vary inside the slice, comma-separated")
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--first-seed", type=int, default=51)
    ap.add_argument("--max-configs", type=int, default=0, help="default: 1%% of the file's configs")
    ap.add_argument("--level", type=float, default=0.90)
    ap.add_argument("--kiln", default="build/bin/kiln-lab")
    args = ap.parse_args()

    keys, times = recorded_times(args.file)
    free = args.free.split(",")
    for p in free:
        if p not in keys:
            raise SystemExit(f"--free names '{p}', which the file does not tune; its parameters: {keys}")
    fixed = [i for i, k in enumerate(keys) if k not in free]
    ran = {v: t for v, t in times.items() if t is not None}
    optimum_values = min(ran, key=ran.get)
    optimum = ran[optimum_values]
    def sig(values):
        return tuple(values[i] for i in fixed)
    inside = [v for v in times if sig(v) == sig(optimum_values)]
    good = [v for v in inside if times[v] is not None and optimum / times[v] >= args.level]
    budget = args.max_configs or max(1, round(len(times) * 0.01))
    print(f"{args.file}: {len(times)} configs; the optimum's slice ({', '.join(free)} free): "
          f"{len(inside)} configs, {len(good)} at {args.level:.2f} of the optimum or better")
    n, g = len(inside), len(good)
    bound = {m: 1 - math.comb(n - g, min(m, n)) / math.comb(n, min(m, n)) for m in (10, 20, 30, budget)}
    print("  chance that m random draws inside the slice hit one: " +
          ", ".join(f"m={m}: {p:.2f}" for m, p in bound.items()))

    groups = collections.defaultdict(lambda: [0, 0])
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        result = run_seed(args.kiln, args.file, budget, seed)
        count = sum(1 for c in result["configs"]
                    if sig(tuple(c["config"][k] for k in keys)) == sig(optimum_values))
        group = "0" if count == 0 else "1-4" if count < 5 else "5+"
        groups[group][0] += 1
        groups[group][1] += result["fraction_of_optimum"] >= args.level
    total = sum(s for s, _ in groups.values())
    reached = sum(r for _, r in groups.values())
    print(f"  {total} seeds at {budget} configs: {reached / total:.2f} reach {args.level:.2f}")
    for group in ("0", "1-4", "5+"):
        seeds, hits = groups[group]
        if seeds:
            print(f"    configs measured in the slice {group}: {seeds} seeds, {hits} reach it")


if __name__ == "__main__":
    main()
