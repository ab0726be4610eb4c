"""What a warm @kiln.autotune call costs over launching its compiled winner
directly, and over calling the same function through ctypes (the floor of
a Python -> native call), on a trivial one-block CPU kernel. Interleaved
rounds, medians; prints a table and JSON.

    .venv/bin/python bench/python_call_overhead.py [--calls N] [--rounds R]
"""

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

import kiln

BODY = """
  if (n > 0) x[0] += 1.0f;
}
"""
KILN_SRC = '#include "kiln/cpu_kernel.h"\ntemplate <int U>\nvoid bump(const kiln::cpu::BlockContext&, float* x, int n) {' + BODY
# The same function for ctypes: Kiln's BlockContext layout, C linkage.
C_SRC = """
struct Dim3 { unsigned x, y, z; };
struct BlockContext { Dim3 block_idx, grid_dim, block_dim; void* shared; unsigned long shared_bytes; };
extern "C" void bump(const BlockContext&, float* x, int n) {""" + BODY


class Ctx(ctypes.Structure):
    _fields_ = [("v", ctypes.c_uint * 9), ("shared", ctypes.c_void_p), ("bytes", ctypes.c_ulong)]


def per_call(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()

    x = np.zeros(16, dtype=np.float32)
    kernel = kiln.Kernel(KILN_SRC, entry="bump<{U}>", backend="cpu", name="bench_bump",
                         signature=["x: f32*", "n: i32"], grid=(1,))
    tuned = kiln.autotune(configs=[kiln.Config(U=1), kiln.Config(U=2)], key=["n"],
                          check=False)(kernel)
    tuned(x, 16)  # tunes (or loads) once
    best = tuned.best_config["U"]
    direct = kiln.compile(KILN_SRC, f"bump<{best}>", backend="cpu",
                          signature=["x: f32*", "n: i32"])

    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "bump.cpp")
        lib = os.path.join(d, "libbump.so")
        open(src, "w").write(C_SRC)
        subprocess.run(["clang++-19", "-O2", "-shared", "-fPIC", src, "-o", lib], check=True)
        so = ctypes.CDLL(lib)
        so.bump.argtypes = [ctypes.POINTER(Ctx), ctypes.c_void_p, ctypes.c_int]
        so.bump.restype = None
        ctx = Ctx()
        for i in range(3, 6):
            ctx.v[i] = 1
        for i in range(6, 9):
            ctx.v[i] = 1
        ptr = x.ctypes.data

        ways = {
            "autotuned": lambda: tuned(x, 16),
            "direct": lambda: direct(x, 16, grid=(1,)),
            "ctypes": lambda: so.bump(ctypes.byref(ctx), ptr, 16),
        }
        samples = {k: [] for k in ways}
        for r in range(args.rounds):
            order = list(ways) if r % 2 == 0 else list(reversed(ways))
            for k in order:
                samples[k].append(per_call(ways[k], args.calls))

    med = {k: statistics.median(v) * 1e6 for k, v in samples.items()}
    report = {
        "us_per_call": med,
        "autotuned_minus_direct_us": med["autotuned"] - med["direct"],
        "direct_minus_ctypes_us": med["direct"] - med["ctypes"],
        "calls": args.calls,
        "rounds": args.rounds,
        "target_us": 2.0,
    }
    for k, v in med.items():
        print(f"{k:10s} {v:8.3f} us/call")
    print(f"autotuned - direct: {report['autotuned_minus_direct_us']:.3f} us (target <= 2)")
    print(f"direct - ctypes:    {report['direct_minus_ctypes_us']:.3f} us")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
