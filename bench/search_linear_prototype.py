#!/usr/bin/env python3
"""A Bayesian linear model on one-hot codes as a search, on recorded spaces.

usage: [ORDER=1|2] [PICK=ts|mean|K] [INIT=8]
       .venv/bin/python bench/search_linear_prototype.py SEEDS FILE.json.gz...

One config at a time: INIT random configs, then the unmeasured config the
model picks. The model regresses log run time (failures at the worst plus
0.5, clipped at the median, as gp's target) on the one-hot codes of every
parameter (ORDER=1) or also of every pair (ORDER=2), with a unit Gaussian
prior on the weights. PICK: ts draws the weights from the posterior
(Thompson sampling), mean takes the lowest predicted time, a number K the
lowest mean - K standard deviations. Prints the share of seeds reaching
0.90 of the optimum by 1% of the space and 0.95 by 2%, and the medians at
0.5/1/2%. docs/lab/search-spaces-journal.md ("What the whole space says")
has the result:
on A100 it does worse than gp.
"""
import os
import sys

import numpy as np

from search_space_structure import load, one_hot_features

NOISE = 0.1  # the noise variance of the standardised target


def search(features, times, seed, budget, init, pick):
    rng = np.random.default_rng(seed)
    measured = list(rng.choice(len(times), init, replace=False))
    while len(measured) < budget:
        y = np.log(times[measured])
        ran = np.isfinite(y)
        y = np.where(ran, y, (np.max(y[ran]) if ran.any() else 0.0) + 0.5)
        y = np.minimum(y, np.median(y))
        y = (y - y.mean()) / (y.std() + 1e-9)
        seen = features[measured]
        if pick == "ts":
            # Posterior of the weights: precision I + F'F / noise.
            precision = np.eye(features.shape[1]) + seen.T @ seen / NOISE
            cov = np.linalg.inv(precision)
            weights = rng.multivariate_normal(cov @ seen.T @ y / NOISE, cov, method="cholesky")
            score = features @ weights
        else:
            # The dual form: a kernel F F' over the measured configs.
            chol = np.linalg.cholesky(seen @ seen.T + NOISE * np.eye(len(measured)))
            alpha = np.linalg.solve(chol.T, np.linalg.solve(chol, y))
            cross = features @ seen.T
            score = cross @ alpha
            if pick != "mean":
                v = np.linalg.solve(chol, cross.T)
                var = np.maximum((features * features).sum(1) - (v * v).sum(0), 1e-9)
                score = score - float(pick) * np.sqrt(var)
        score[measured] = np.inf
        measured.append(int(np.argmin(score)))
    return times.min() / np.minimum.accumulate(times[measured])


def main(seeds, paths):
    order = int(os.environ.get("ORDER", "1"))
    pick = os.environ.get("PICK", "ts")
    init = int(os.environ.get("INIT", "8"))
    rows = []
    for path in paths:
        _, levels, codes, times = load(path)
        features = one_hot_features(codes, levels, order)
        n = len(times)
        at = {share: max(1, int(n * share)) for share in (0.005, 0.01, 0.02)}
        runs = [search(features, times, s, at[0.02] + 1, init, pick) for s in range(1, seeds + 1)]
        best = {share: np.array([r[k - 1] for r in runs]) for share, k in at.items()}
        rows.append(f"{path.split('/')[-1]}: 0.90 by 1% {np.mean(best[0.01] >= 0.9):.2f}, "
                    f"0.95 by 2% {np.mean(best[0.02] >= 0.95):.2f}, medians "
                    + "/".join(f"{np.median(b):.3f}" for b in best.values()))
    print(f"ORDER={order} PICK={pick} INIT={init} | " + " || ".join(rows))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(int(sys.argv[1]), sys.argv[2:])
