"""A serving workload on @kiln.autotune: one kernel called with 200
distinct sequence lengths between 1 and 4096, keyed with power-of-two
buckets, counts its tunings (at most 13: one per bucket); then its warm
call against the same kernel keyed exactly (today's key), interleaved
rounds, medians, on a trivial one-block CPU kernel. Prints a table and JSON.

    .venv/bin/python bench/python_dynamic_shapes.py [--calls N] [--rounds R]
"""

import argparse
import json
import random
import statistics
import time

import numpy as np

import kiln

SRC = """#include "kiln/cpu_kernel.h"
template <int U>
void bump(const kiln::cpu::BlockContext&, float* x, int n) {
  if (n > 0) x[0] += 1.0f;
}
"""


def per_call(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def autotuned(name, key):
    kernel = kiln.Kernel(SRC, entry="bump<{U}>", backend="cpu", name=name,
                         signature=["x: f32*", "n: i32"], grid=(1,))
    return kiln.autotune(configs=[kiln.Config(U=1), kiln.Config(U=2)], key=key,
                         check=False)(kernel)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()

    pow2 = kiln.power_of_two_buckets(1, 4096)
    served = autotuned("bench_serving", {"n": pow2, "x": {0: pow2}})
    lengths = random.Random(0).sample(range(1, 4097), 200)
    t0 = time.perf_counter()
    for n in lengths:
        served(np.zeros(n, dtype=np.float32), n)
    serving_s = time.perf_counter() - t0
    tunings = served.stats()["misses"]

    n = 100  # in the bucket of 128, tuned above
    x = np.zeros(n, dtype=np.float32)
    exact = autotuned("bench_exact", ["n"])
    exact(x, n)
    ways = {"exact key": lambda: exact(x, n), "bucketed key": lambda: served(x, n)}
    samples = {k: [] for k in ways}
    for r in range(args.rounds):
        for k in (list(ways) if r % 2 == 0 else list(reversed(ways))):
            samples[k].append(per_call(ways[k], args.calls))
    med = {k: statistics.median(v) * 1e6 for k, v in samples.items()}
    report = {
        "lengths": len(lengths),
        "tunings": tunings,
        "serving_seconds": serving_s,
        "us_per_call": med,
        "bucketed_minus_exact_us": med["bucketed key"] - med["exact key"],
        "bucketed_over_exact": med["bucketed key"] / med["exact key"],
        "calls": args.calls,
        "rounds": args.rounds,
        "target": {"tunings": 13, "warm_diff_us": 0.5},
    }
    print(f"{len(lengths)} lengths in 1..4096: {tunings} tunings (target <= 13), "
          f"{serving_s:.1f} s in all")
    for k, v in med.items():
        print(f"{k:13s} {v:8.3f} us/call")
    print(f"bucketed - exact: {report['bucketed_minus_exact_us']:.3f} us (target <= 0.5), "
          f"ratio {report['bucketed_over_exact']:.3f}")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
