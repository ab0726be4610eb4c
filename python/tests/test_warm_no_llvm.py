"""A kernel tuned by an earlier process is served in a new one with no
compiler loaded (issue 58): the stored shared object is dlopen'ed, the keys
are computed without LLVM, and the result is correct. A damaged stored
program is refused by the cache's digest and compiled again."""

import pathlib

from conftest import run_python

CHILD = r'''
import numpy as np, kiln, kiln._kiln as k
SAXPY = r"""
#include "kiln/cpu_kernel.h"
template <int BLOCK>
void saxpy(const kiln::cpu::BlockContext& ctx, float a, const float* x, float* y, int n) {
  const int begin = (int)ctx.block_idx.x * BLOCK;
  for (int i = begin; i < begin + BLOCK && i < n; ++i) y[i] = a * x[i] + y[i];
}
"""
saxpy = kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu", name="warm_saxpy",
                    signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                    grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),))
tuned = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (256, 1024)],
                      key=["n"], restore_value=["y"])(saxpy)
x = np.arange(5000, dtype=np.float32)
y = np.ones(5000, dtype=np.float32)
tuned(2.0, x, y, x.size)
maps = open("/proc/self/maps").read()
heavy = sorted({h for h in ("libLLVM", "libclang-cpp", "libkiln_cpu_backend") if h in maps})
print("correct:", bool((y == 2.0 * x + 1.0).all()), "heavy:", heavy,
      "libc:", "libc.so" in maps, "loaded:", k._cpu_backend_loaded())
'''


def test_a_new_process_serves_a_tuned_cpu_kernel_with_no_llvm(tmp_path):
    cold = run_python(CHILD, cache=str(tmp_path))
    # The first process compiled: the check can see a compiler.
    assert "correct: True" in cold and "libLLVM" in cold, cold
    warm = run_python(CHILD, cache=str(tmp_path))
    assert "correct: True heavy: [] libc: True loaded: False" in warm, warm


def test_a_damaged_stored_shared_object_is_compiled_again(tmp_path):
    run_python(CHILD, cache=str(tmp_path))
    progs = list(pathlib.Path(tmp_path, "artifacts").rglob("*.prog"))
    assert progs, "nothing stored"
    for p in progs:
        data = bytearray(p.read_bytes())
        data[len(data) // 2] ^= 0xFF
        p.write_bytes(bytes(data))
    warm = run_python(CHILD, cache=str(tmp_path))
    assert "correct: True" in warm, warm
