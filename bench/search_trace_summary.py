#!/usr/bin/env python3
"""Where a replayed search spent its budget, from `kiln-lab bench search --trace`.

usage: search_trace_summary.py TRACE.jsonl [--at SHARE]...

For each file and strategy in the trace, over seeds: the number of configs
measured before the best so far first reached 0.90, 0.95 and 1.0 of the
file's optimum (median and quartiles; a seed that never did counts as past
its budget), and how the search found the optimum's neighbourhood: the
first measurement that differs from the optimum in at most two parameters,
and how many such configs were measured by each --at share of the space
(default 0.01 and 0.02). A curve says how close a search got; this says
whether it missed by never entering the right region or by not finding the
best config once there. Standard library only.
"""
import argparse
import collections
import json
import math
import statistics

from recorded_file import recorded_times


def load_recorded(path):
    keys, all_times = recorded_times(path)
    times = {c: t for c, t in all_times.items() if t is not None}
    best = min(times.values())
    optima = [c for c, t in times.items() if t <= best * (1 + 1e-9)]
    return keys, optima, len(all_times)


def quartiles(values):
    if len(values) == 1:
        return values[0], values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[1], q[0], q[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--at", type=float, action="append", help="share of the space (0.02 = 2%%)")
    args = ap.parse_args()
    shares = args.at or [0.01, 0.02]
    runs = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(args.trace) as f:
        for line in f:
            m = json.loads(line)
            runs[(m["file"], m["strategy"])][m["seed"]].append(m)
    spaces = {}
    for (path, strategy), seeds in sorted(runs.items()):
        if path not in spaces:
            try:
                spaces[path] = load_recorded(path)
            except (OSError, ValueError, KeyError) as e:
                raise SystemExit(f"search_trace_summary: cannot read the recorded space {path} "
                                 f"that the trace names ({e}); run from the directory "
                                 f"`kiln-lab bench search --trace` ran in")
        keys, optima, size = spaces[path]

        def distance(config):
            return min(sum(config[k] != o[i] for i, k in enumerate(keys)) for o in optima)

        print(f"{path}: {strategy}, {len(seeds)} seeds, {size} configs")
        for level in (0.90, 0.95, 1.0):
            firsts = []
            for trace in seeds.values():
                hit = next((m["index"] + 1 for m in trace if m["best_so_far"] >= level - 1e-9), None)
                firsts.append(hit if hit is not None else math.inf)
            med, q1, q3 = quartiles(sorted(firsts))
            print(f"  configs to reach {level:.2f}: median {med:g} [{q1:g}, {q3:g}]")
        budgets = {s: max(1, int(s * size)) for s in shares}  # as the curves count them
        firsts, counts = [], {s: [] for s in shares}
        for trace in seeds.values():
            near = [m["index"] + 1 for m in trace if distance(m["config"]) <= 2]
            firsts.append(near[0] if near else math.inf)
            for s in shares:
                counts[s].append(sum(1 for i in near if i <= budgets[s]))
        med, q1, q3 = quartiles(sorted(firsts))
        print(f"  first config within 2 parameters of the optimum: median {med:g} [{q1:g}, {q3:g}]")
        for s in shares:
            med, q1, q3 = quartiles(sorted(counts[s]))
            print(f"  of them measured by {s * 100:g}% ({budgets[s]} configs): "
                  f"median {med:g} [{q1:g}, {q3:g}]")


if __name__ == "__main__":
    main()
