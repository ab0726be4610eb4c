"""A framework op with two implementations, chosen per token count by
kiln.choose_one: a numpy runner with tactics (chunk sizes) and a Kiln
kernel runner. Outside a tuning scope the op takes its fallback; inside,
every bucket of the dynamic dimension is tuned once and the decisions are
saved to a file the next process loads."""

import os
import sys
import tempfile

import numpy as np

import kiln

RMS = r"""
#include "kiln/cpu_kernel.h"
#include <math.h>
void rmsnorm(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int rows, int cols) {
  for (int r = (int)ctx.block_idx.x; r < rows; r += (int)ctx.grid_dim.x) {
    float s = 0;
    for (int c = 0; c < cols; ++c) s += x[r * cols + c] * x[r * cols + c];
    const float inv = 1.0f / sqrtf(s / cols + 1e-6f);
    for (int c = 0; c < cols; ++c) y[r * cols + c] = x[r * cols + c] * inv;
  }
}
"""


class NumpyRmsNorm(kiln.Runner):
    name = "numpy_rmsnorm"

    def get_valid_tactics(self, inputs, profile):
        return [64, 512]  # rows per chunk

    def forward(self, inputs, tactic=-1, do_preparation=False):
        x, y = inputs
        step = tactic if tactic > 0 else len(x)
        for r in range(0, len(x), step):
            xs = x[r:r + step]
            y[r:r + step] = xs / np.sqrt((xs * xs).mean(axis=1, keepdims=True) + 1e-6)


class KilnRmsNorm(kiln.Runner):
    name = "kiln_rmsnorm"

    def __init__(self):
        self.kernel = None

    def get_valid_tactics(self, inputs, profile):
        return [1, 2]  # blocks of rows in flight

    def forward(self, inputs, tactic=-1, do_preparation=False):
        if self.kernel is None:
            self.kernel = kiln.compile(RMS, "rmsnorm", backend="cpu")
        if do_preparation:
            return
        x, y = inputs
        self.kernel(x, y, x.shape[0], x.shape[1], grid=(max(tactic, 1),))


if __name__ == "__main__":
    runners = [NumpyRmsNorm(), KilnRmsNorm()]
    dynamic = [kiln.DynamicDim(input=0, dim=0, buckets=(16, 256))]
    follow = [(1, 0, lambda p: p[0])]
    cache = os.path.join(tempfile.gettempdir(), f"kiln-framework-op-{os.getuid()}.json")
    x = np.random.default_rng(0).standard_normal((100, 256)).astype(np.float32)
    y = np.zeros_like(x)
    print("untuned:", kiln.choose_one("rmsnorm", runners, [x, y], dynamic=dynamic, constraints=follow))
    with kiln.tuning(cache=cache):
        runner, tactic = kiln.choose_one("rmsnorm", runners, [x, y], dynamic=dynamic,
                                         constraints=follow)
    runner.forward([x, y], tactic=tactic)
    expect = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(y, expect, rtol=1e-4, atol=1e-5)
    print(f"tuned: {runner.name} tactic {tactic}; decisions saved near {cache}")
    sys.exit(0)
