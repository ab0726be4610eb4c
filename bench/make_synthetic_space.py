"""A synthetic recorded space shaped like the benchmark hub's hotspot
spaces (its hotspot_milo kernel): a gzip'd Kernel Tuner cache file
(../shared/recorded-spaces/README.md), every valid config with a made-up but
structured run time, for checking that Kiln's replay and searches scale to
hundreds of thousands of configs (docs/lab/search-cost-journal.md, "Spaces
of 100,000 configs and more"). Standard library only; deterministic for a
seed.

  python3 bench/make_synthetic_space.py OUT.json.gz [--seed N] [--scale F]
                                                    [--shared-limit BYTES]

The parameters and restrictions are the hub's:
  block_size_x = 1,2,4,8,16 + 32*i (i = 1..32), block_size_y = 1..32 (powers
  of two), tile_size_x, tile_size_y, temporal_tiling_factor,
  loop_unroll_factor_t = 1..10, sh_power = 0,1; constants grid_width=4096,
  grid_height=4096, max_tfactor=10; block_size_x*block_size_y in [32, 1024],
  temporal_tiling_factor % loop_unroll_factor_t == 0, and the shared memory
  of a block's tile with its halo (2 + sh_power arrays of floats) <= 64 KiB.
At --scale 1 that is 105,412 valid configs (38 MB gzip'd); --shared-limit
BYTES changes the last restriction (0: none, 421,200 configs, for a space
larger than the hub's, those past an SM's 164 KiB of shared memory failing at
launch); --scale F < 1 keeps about ceil(n * F^(1/6)) evenly spaced values of
each of the six long lists, so the cartesian size shrinks about F-fold.

The time model (ms) is a roofline of a 2-D stencil over 10 time steps, with
the interactions that make a real space hard to search: the halo's redundant
work grows with the temporal tiling factor and shrinks with the block's tile;
occupancy comes from registers (tiles and unrolling) and shared memory
(tiles, halo, sh_power); coalescing wants block_size_x >= 32; a shared-memory
row of a multiple of 32 floats gets bank conflicts; unrolling helps until its
registers spill; and each config has a few percent of its own noise. A block
whose registers exceed the SM's fails at launch (RuntimeFailedConfig), a
tile times unroll too large to compile, and a sprinkling at random, fails to
compile (CompilationFailedConfig).
"""
import argparse
import gzip
import hashlib
import itertools
import json
import math
import random

GRID = 4096
STEPS = 10  # max_tfactor: time steps of the whole run


def value_lists(scale):
    lists = {
        "block_size_x": [1, 2, 4, 8, 16] + [32 * i for i in range(1, 33)],
        "block_size_y": [1, 2, 4, 8, 16, 32],
        "tile_size_x": list(range(1, 11)),
        "tile_size_y": list(range(1, 11)),
        "temporal_tiling_factor": list(range(1, 11)),
        "loop_unroll_factor_t": list(range(1, 11)),
        "sh_power": [0, 1],
    }
    if scale < 1:
        for name, values in lists.items():
            if len(values) <= 2:
                continue
            keep = max(2, math.ceil(len(values) * scale ** (1 / 6)))
            lists[name] = [values[round(i * (len(values) - 1) / (keep - 1))] for i in range(keep)]
    lists.update({"grid_width": [GRID], "grid_height": [GRID], "max_tfactor": [STEPS]})
    return lists


def valid(bx, by, tx, ty, t, u, sh, shared_limit):
    return (
        32 <= bx * by <= 1024
        and t % u == 0
        and (not shared_limit or shared_bytes(bx, by, tx, ty, t, sh) <= shared_limit)
    )


def shared_bytes(bx, by, tx, ty, t, sh):
    return (bx * tx + 2 * t) * (by * ty + 2 * t) * (2 + sh) * 4


def model(bx, by, tx, ty, t, u, sh, rng):
    """(time in ms, None) or (None, the failure's name)."""
    threads = bx * by
    regs = 24 + 6 * tx * ty + 3 * u + (8 if sh else 0)
    if tx * ty * u > 400 or rng.random() < 0.002:
        return None, "CompilationFailedConfig"
    smem = shared_bytes(bx, by, tx, ty, t, sh)
    if min(regs, 255) * threads > 65536 or smem > 167936:  # an A100 SM's registers, shared memory
        return None, "RuntimeFailedConfig"
    spill = 1.0 + max(0, regs - 255) / 64  # registers spilled to local memory
    blocks = min(32, 2048 // threads, 65536 // (min(regs, 255) * threads), 167936 // smem)
    occupancy = blocks * threads / 2048
    latency = min(1.0, occupancy / 0.5) ** 0.7  # hiding latency wants half the SM busy
    # A launch computes t steps of an (x + 2t) x (y + 2t) tile to write x by y.
    out_x, out_y = bx * tx, by * ty
    halo = sum((out_x + 2 * (t - s)) * (out_y + 2 * (t - s)) for s in range(1, t + 1)) / (
        t * out_x * out_y)
    launches = math.ceil(STEPS / t)
    cells = GRID * GRID
    coalesced = min(1.0, bx / 32) / (1 + 0.12 * (tx - 1))
    banks = 1.2 if (out_x + 2 * t) % 32 == 0 else 1.0
    # Unrolling the time loop saves its overhead, most when it is whole.
    unroll = 1 + 0.35 / u + (0.08 if u != t else 0.0)
    power_reads = 0.75 if sh else 1.0  # power read once into shared memory, reused t times
    memory_ms = launches * cells * 4 * (2 + power_reads) * min(halo, 4.0) / (1.5e9 * coalesced)
    compute_ms = STEPS * cells * 15 * halo * unroll * banks * spill / 9e9
    ms = max(memory_ms, compute_ms) / latency + 0.2 * min(memory_ms, compute_ms) + 0.006 * launches
    return ms * math.exp(rng.gauss(0, 0.03)), None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the file to write (.json.gz)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="in (0, 1]: shrink the space about this much")
    parser.add_argument("--shared-limit", type=int, default=65536,
                        help="the restriction on a block's shared memory, bytes (the hub's "
                             "65536: 105,412 configs at --scale 1); 0: none (421,200 configs, "
                             "those past an SM's 164 KiB failing at launch)")
    args = parser.parse_args()
    if not 0 < args.scale <= 1:
        parser.error("--scale must be in (0, 1]")
    lists = value_lists(args.scale)
    keys = list(lists)
    header = {
        "device_name": "synthetic hotspot (bench/make_synthetic_space.py, seed %d)" % args.seed,
        "kernel_name": "hotspot_kernel",
        "problem_size": [GRID, GRID],
        "tune_params_keys": keys,
        "tune_params": lists,
        "objective": "time",
    }
    clock = 1704067200.0  # 2024-01-01 UTC: timestamps advance with the run
    counts = {"ok": 0, "CompilationFailedConfig": 0, "RuntimeFailedConfig": 0}
    best = None
    with gzip.open(args.out, "wt", compresslevel=6) as f:
        f.write(json.dumps(header, indent=0)[:-2] + ',\n"cache": {\n')
        first = True
        names = keys[:7]
        for values in itertools.product(*(lists[n] for n in names)):
            if not valid(*values, args.shared_limit):
                continue
            full = list(values) + [GRID, GRID, STEPS]
            key = ",".join(str(v) for v in full)
            digest = hashlib.blake2b(("%d:%s" % (args.seed, key)).encode(), digest_size=8)
            rng = random.Random(int.from_bytes(digest.digest(), "little"))
            ms, failure = model(*values, rng)
            compile_ms = 900 + 120 * values[2] * values[3] * values[5] ** 0.5 + rng.uniform(0, 300)
            record = dict(zip(keys, full))
            if failure:
                counts[failure] += 1
                bench_ms = rng.uniform(0.3, 1.5) if failure == "RuntimeFailedConfig" else 0
                record.update({"time": failure, "compile_time": compile_ms,
                               "verification_time": 0, "benchmark_time": bench_ms})
            else:
                counts["ok"] += 1
                if best is None or ms < best[0]:
                    best = (ms, key)
                times = [ms * math.exp(rng.gauss(0, 0.004)) for _ in range(32)]
                times[0] *= 1.02  # the first run warms the caches
                bench_ms = sum(times) + 30 + rng.uniform(0, 10)
                record.update({"time": sum(times) / len(times), "times": times,
                               "compile_time": compile_ms, "verification_time": 0,
                               "benchmark_time": bench_ms,
                               "GFLOP/s": STEPS * GRID * GRID * 15 / (ms * 1e6)})
            framework_ms = rng.uniform(1.5, 3)
            record.update({"strategy_time": 0, "framework_time": framework_ms})
            clock += (compile_ms + bench_ms + framework_ms) / 1000
            record["timestamp"] = "%s+00:00" % _iso(clock)
            f.write(("" if first else ",\n") + json.dumps(key) + ": " + json.dumps(record))
            first = False
        f.write("\n}\n}\n")
    total = sum(counts.values())
    print("%s: %d configs (%d ran, %d failed to compile, %d failed at launch); best %.4f ms at %s"
          % (args.out, total, counts["ok"], counts["CompilationFailedConfig"],
             counts["RuntimeFailedConfig"], best[0] if best else float("nan"),
             best[1] if best else "-"))


def _iso(seconds):
    import datetime
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S.%f")


if __name__ == "__main__":
    main()
