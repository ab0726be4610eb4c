#!/usr/bin/env python3
"""What other devices' winners are worth on one device: a bound on a warm start.

usage: search_cross_device.py TARGET.json.gz OTHER.json.gz...

Every file is a recorded space of one kernel (the same parameters) on one
device. For each other file, its 1, 3 and 10 fastest configs are looked up in
TARGET and the best of them printed as a fraction of TARGET's optimum: what a
search seeded with that device's winners would hold before measuring
anything else. A last line does the same with the configs ranked by their
mean rank over all the other files. A config that TARGET did not record or
that failed there counts as 0. Standard library only.
"""
import sys

from recorded_file import recorded_times


def ranked(times):
    return sorted((k for k, t in times.items() if t is not None), key=lambda k: times[k])


def cells(order, target, optimum):
    """The best of order's first 1, 3 and 10 on target, as fractions."""
    best = [max((optimum / target[k] if target.get(k) else 0.0) for k in order[:n])
            for n in (1, 3, 10)]
    return " / ".join(f"{b:.3f}" for b in best)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    keys, target = recorded_times(sys.argv[1])
    optimum = min(t for t in target.values() if t is not None)
    others = {}
    for path in sys.argv[2:]:
        their_keys, others[path] = recorded_times(path)
        if their_keys != keys:
            sys.exit(f"{path}: parameters {their_keys}, not {sys.argv[1]}'s {keys}: "
                     "give recorded spaces of one kernel")
    print(f"{sys.argv[1]}: the best of the other devices' 1 / 3 / 10 fastest configs")
    ranks = []
    for path, times in others.items():
        order = ranked(times)
        ranks.append({k: r for r, k in enumerate(order)})
        print(f"  {path}: {cells(order, target, optimum)}")
    worst = max(len(r) for r in ranks)
    pooled = sorted(target, key=lambda k: sum(r.get(k, worst) for r in ranks) / len(ranks))
    print(f"  by mean rank over all of them: {cells(pooled, target, optimum)}")


if __name__ == "__main__":
    main()
