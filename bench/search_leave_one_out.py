#!/usr/bin/env python3
"""Leave-one-out choice among search variants on recorded spaces.

usage: search_leave_one_out.py [--at SHARE,SHARE...] VARIANT=RUN.json[,RUN.json...] ...

Each RUN.json is one `kiln-lab bench search --strategy hybrid --json` run of
the variant (one per budget; its last checkpoint's median is the score of a
file at that budget). With --at, each run is read at those shares of the
space instead (one run to the largest budget serves every smaller one). For every file left out in turn, the variant with the
best mean score over the other files and every budget is chosen, and its
score on the file left out is the held-out score. Prints, per file, the
variant chosen without it and the held-out scores per budget, then the
held-out means beside each variant's own means (which a choice made on
every file would report).
"""
import json
import statistics
import sys


def name_of(path):
    return path.rsplit("/", 1)[-1].replace(".json.gz", "").replace(".json", "")


def scores(runs, at=None):
    """{(file, budget): median} from a variant's runs: each run's last
    checkpoint, or its checkpoints at the shares `at`."""
    out = {}
    for path in runs:
        with open(path) as f:
            for entry in json.load(f):
                points = entry["strategies"]["hybrid"]
                for point in [points[-1]] if at is None else [
                        min(points, key=lambda p, s=s: abs(p["share"] - s)) for s in at]:
                    out[(name_of(entry["file"]), point["share"])] = point["median"]
    return out


def main():
    args = sys.argv[1:]
    at = None
    if args[:1] == ["--at"] and len(args) > 1:
        at = [float(s) for s in args[1].split(",")]
        args = args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    variants = {}
    for arg in args:
        name, _, runs = arg.partition("=")
        variants[name] = scores(runs.split(","), at)
    keys = set.intersection(*(set(v) for v in variants.values()))
    files = sorted({f for f, _ in keys})
    budgets = sorted({b for _, b in keys})
    held = {b: [] for b in budgets}
    for left in files:
        def fitted(v):
            return statistics.mean(variants[v][(f, b)] for f in files if f != left for b in budgets)
        chosen = max(sorted(variants), key=fitted)
        cells = [variants[chosen][(left, b)] for b in budgets]
        for b, c in zip(budgets, cells):
            held[b].append(c)
        print(f"{left:28} chosen without it: {chosen:10} held out: "
              + " ".join(f"{b * 100:g}%={c:.3f}" for b, c in zip(budgets, cells)))
    print("held-out mean: " + " ".join(f"{b * 100:g}%={statistics.mean(held[b]):.3f}" for b in budgets))
    for v in sorted(variants):
        print(f"  {v:10} on every file: " + " ".join(
            f"{b * 100:g}%={statistics.mean(variants[v][(f, b)] for f in files):.3f}" for b in budgets))


if __name__ == "__main__":
    main()
