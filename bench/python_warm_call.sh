#!/usr/bin/env bash
# A new Python process's `import kiln` plus the first call of a CPU kernel
# tuned by an earlier process (issue 58: <= 10 ms): one process tunes the
# saxpy of docs/python.md into a fresh cache (not timed), then ROUNDS
# interleaved rounds of `python -c pass` and of a new process that imports
# kiln and calls the tuned kernel once, the second timed inside the process
# (from before `import kiln`, numpy imported first, to the call's return)
# and as process wall time. Prints medians, and whether the warm process mapped libLLVM.
#   bash bench/python_warm_call.sh [ROUNDS=21]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-21}
py=${PY:-.venv/bin/python}
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
cat >"$cache/warm.py" <<'PY'
import time
import numpy as np  # the caller's arrays: not Kiln's cost (200+ ms on a loaded 2-core VM)
t0 = time.perf_counter()
import kiln
SAXPY = r"""
#include "kiln/cpu_kernel.h"
template <int BLOCK>
void saxpy(const kiln::cpu::BlockContext& ctx, float a, const float* x, float* y, int n) {
  const int begin = (int)ctx.block_idx.x * BLOCK;
  for (int i = begin; i < begin + BLOCK && i < n; ++i) y[i] = a * x[i] + y[i];
}
"""
saxpy = kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu",
                    signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                    grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),))
tuned = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (1024, 4096)],
                      key=["n"], restore_value=["y"])(saxpy)
x = np.ones(100_000, dtype=np.float32)
y = np.zeros(100_000, dtype=np.float32)
t_import = time.perf_counter()
tuned(2.0, x, y, x.size)
t1 = time.perf_counter()
assert (y == 2.0).all()
maps = open("/proc/self/maps").read()
print((t1 - t0) * 1e3, (t_import - t0) * 1e3, int("libLLVM" in maps))
PY
KILN_CACHE_DIR=$cache "$py" "$cache/warm.py" >/dev/null
"$py" - "$rounds" "$py" "$cache" <<'PY'
import os, statistics, subprocess, sys, time
rounds, py, cache = int(sys.argv[1]), sys.argv[2], sys.argv[3]
env = dict(os.environ, KILN_CACHE_DIR=cache)
wall = {"python -c pass": [], "import kiln + first call": []}
inside, imports, llvm = [], [], set()
for i in range(rounds):
    order = ["pass", "warm"] if i % 2 == 0 else ["warm", "pass"]
    for what in order:
        t0 = time.perf_counter()
        if what == "pass":
            subprocess.run([py, "-c", "pass"], check=True)
            wall["python -c pass"].append(time.perf_counter() - t0)
        else:
            out = subprocess.run([py, cache + "/warm.py"], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
            wall["import kiln + first call"].append(time.perf_counter() - t0)
            inside.append(float(out[0]))
            imports.append(float(out[1]))
            llvm.add(out[2])
m = {k: statistics.median(v) * 1e3 for k, v in wall.items()}
for k, v in m.items():
    print(f"{k:26s} process wall median {v:7.1f} ms ({rounds} rounds)")
print(f"in the warm process: import kiln and the kernel's declaration "
      f"{statistics.median(imports):.1f} ms, import + first call {statistics.median(inside):.1f} ms "
      f"(median; min {min(inside):.1f}); libLLVM mapped: {'yes' if '1' in llvm else 'no'}")
print(f"process wall over python -c pass: {m['import kiln + first call'] - m['python -c pass']:.1f} ms")
PY
