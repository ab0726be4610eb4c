#!/usr/bin/env python3
"""How learnable and how navigable a recorded space is, from all its records.

usage: [GROUP=name,name] .venv/bin/python bench/search_space_structure.py FILE.json.gz...

Three measures per file, each computed from every config the file recorded,
so they bound what a search that sees 1% of the space can learn:

- Interaction order: a ridge fit of log run time (clipped at the median,
  as gp clips it) on one-hot codes of the parameters, with every main
  effect (order 1), every pair of parameters (order 2) and every triple
  (order 3). Printed: the share of variance explained and the rank the fit
  gives the optimum among all configs. When only order 3 ranks the optimum
  near the top, no model fitted to a few dozen configs can point at it.
- Two groups: the same fit on the joint codes of GROUP's parameters
  (default block_size_x,block_size_y: a convolution's block shape) plus the
  joint codes of the others (the rest of a config: its "slice"), added,
  with no interaction between the groups. It asks whether what a block
  shape is worth carries from one slice to the next.
- Basins: steepest descent over the one-parameter neighbourhood (a config
  and every config that differs in one parameter, any value of it). Printed:
  the number of local optima, and the share of configs whose descent ends
  at a config within 0.90 of the optimum.

Needs numpy (the venv of scripts/setup.sh has it).
docs/lab/search-spaces-journal.md, "What the whole space says", has the
numbers for the shared files.
"""
import collections
import gzip
import itertools
import json
import os
import sys

import numpy as np


def load(path):
    with gzip.open(path) if path.endswith(".gz") else open(path) as f:
        doc = json.load(f)
    lists = doc["tune_params"]
    names = [k for k in doc["tune_params_keys"] if len(lists[k]) > 1]
    codes, times = [], []
    for record in doc["cache"].values():
        codes.append(tuple(lists[k].index(record[k]) for k in names))
        t = record["time"]
        ok = isinstance(t, (int, float)) and t > 0 and np.isfinite(t)
        times.append(float(t) if ok else np.inf)
    return names, [len(lists[k]) for k in names], np.array(codes), np.array(times)


def one_hot_features(codes, levels, order):
    hot = [np.eye(n)[codes[:, p]] for p, n in enumerate(levels)]
    blocks = [np.ones((len(codes), 1))]
    for k in range(1, order + 1):
        for group in itertools.combinations(range(len(levels)), k):
            block = hot[group[0]]
            for p in group[1:]:
                block = (block[:, :, None] * hot[p][:, None, :]).reshape(len(codes), -1)
            blocks.append(block)
    return np.concatenate(blocks, 1)


def interaction_order(codes, levels, times, order):
    return ridge_fit(one_hot_features(codes, levels, order), times)


def two_groups(names, codes, times, group):
    blocks = []
    for inside in (True, False):
        cols = [p for p, name in enumerate(names) if (name in group) == inside]
        joint = {}
        ids = np.array([joint.setdefault(tuple(c[cols]), len(joint)) for c in codes])
        blocks.append(np.eye(len(joint))[ids])
    return ridge_fit(np.concatenate([np.ones((len(codes), 1))] + blocks, 1), times)


def ridge_fit(features, times, ridge=1.0):
    ran = np.isfinite(times)
    y = np.log(times[ran])
    y = np.minimum(y, np.median(y))
    fitted = features[ran]
    # The dual form: as many unknowns as configs, whatever the feature count.
    alpha = np.linalg.solve(fitted @ fitted.T + ridge * np.eye(len(y)), y - y.mean())
    predicted = features @ (fitted.T @ alpha) + y.mean()
    predicted[~ran] = np.inf
    explained = 1 - np.var(y - predicted[ran]) / np.var(y)
    rank = int(np.sum(predicted < predicted[np.argmin(times)]))
    top = np.argsort(predicted)[: max(1, len(times) // 100)]
    return explained, rank, float(times.min() / times[top].min())


def basins(codes, levels, times):
    index = {tuple(c): i for i, c in enumerate(codes)}
    downhill = []
    for i, c in enumerate(codes):
        best = i
        for p, n in enumerate(levels):
            for v in range(n):
                j = index.get(tuple(c[:p]) + (v,) + tuple(c[p + 1:]))
                if j is not None and times[j] < times[best]:
                    best = j
        downhill.append(best)
    ends = []
    for i in range(len(codes)):
        while downhill[i] != i:
            i = downhill[i]
        ends.append(i)
    share = times.min() / times
    count = collections.Counter(ends)
    good = sum(n for end, n in count.items() if share[end] >= 0.90)
    return len(count), good / len(codes)


def main(paths):
    for path in paths:
        names, levels, codes, times = load(path)
        print(f"{path.split('/')[-1]}: {len(times)} configs, parameters {names}")
        for order in (1, 2, 3):
            explained, rank, reach = interaction_order(codes, levels, times, order)
            print(f"  order {order}: explains {explained:.2f} of the variance, "
                  f"ranks the optimum {rank + 1}, its top 1% reaches {reach:.3f}")
        group = set(os.environ.get("GROUP", "block_size_x,block_size_y").split(","))
        if group & set(names) and set(names) - group:
            explained, rank, reach = two_groups(names, codes, times, group)
            print(f"  {'+'.join(sorted(group & set(names)))} and the rest, added: explains "
                  f"{explained:.2f}, ranks the optimum {rank + 1}, its top 1% reaches {reach:.3f}")
        optima, good = basins(codes, levels, times)
        print(f"  {optima} local optima; {good:.2f} of the configs descend to one at 0.90")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
