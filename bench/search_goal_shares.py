#!/usr/bin/env python3
"""The search goal's numbers from `kiln-lab bench search --json`, one line a file.

usage: kiln-lab bench search --recorded FILE... --strategy S --json > out.json
       search_goal_shares.py out.json

For each file and strategy: the share of seeds whose best so far reached
0.90 of the optimum by 1% of the space and 0.95 by 2% (the goal wants a
median at those levels, so a share above one half), and the median at 0.5,
1, 2 and 5%. What judged each variant in the lists of what was tried
(docs/lab/search-*-journal.md): a median moves between bimodal modes
from seed to seed, the share moves smoothly. Standard library only.
"""
import json
import sys


def at(points, share):
    return min(points, key=lambda p: abs(p["share"] - share))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        files = json.load(f)
    for entry in files:
        name = entry["file"].split("/")[-1].replace(".json.gz", "").replace(".json", "")
        for strategy, points in entry["strategies"].items():
            medians = "/".join(f"{at(points, s)['median']:.3f}" for s in (0.005, 0.01, 0.02, 0.05))
            print(f"{name} {strategy}: reaching 0.90 at 1% {at(points, 0.01)['reaching_0.90']:.2f}, "
                  f"0.95 at 2% {at(points, 0.02)['reaching_0.95']:.2f}; "
                  f"median at 0.5/1/2/5% {medians}")


if __name__ == "__main__":
    main()
