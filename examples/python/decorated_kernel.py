"""A decorated kernel, as a Triton user writes one: a kernel template, its
configs, and a key. The first call of each size tunes; the rest are served
from memory (and the next process from the tuning cache on disk)."""

import numpy as np

import kiln

SOURCE = r"""
#include "kiln/cpu_kernel.h"
// y[i] = sum of x over a window of W around i (a small stencil).
template <int BLOCK, int W>
void window_sum(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n) {
  const int begin = (int)ctx.block_idx.x * BLOCK;
  const int end = begin + BLOCK < n ? begin + BLOCK : n;
  for (int i = begin; i < end; ++i) {
    float s = 0;
    for (int k = -2; k <= 2; ++k) {
      const int j = i + k * W / W;  // W only changes the code's shape, not the result
      if (j >= 0 && j < n) s += x[j];
    }
    y[i] = s;
  }
}
"""

window_sum = kiln.autotune(
    space={"BLOCK": [512, 4096, 32768], "W": [1, 2]},
    key=["n"],
)(kiln.Kernel(SOURCE, entry="window_sum<{BLOCK},{W}>", backend="cpu",
              signature=["x: f32*", "y: f32*", "n: i32"],
              grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),)))

if __name__ == "__main__":
    for n in (10_000, 200_000, 10_000):
        x = np.ones(n, dtype=np.float32)
        y = np.zeros(n, dtype=np.float32)
        window_sum(x, y, n)
        assert y[n // 2] == 5.0 and y[0] == 3.0
        print(f"n={n}: {window_sum.best_config} ({window_sum.source((n,))})")
    print("stats:", window_sum.stats())
