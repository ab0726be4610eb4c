"""A tiny elementwise-expression DSL on Kiln: about 100 lines from an
expression to a tuned, cached kernel.

    f = elementwise("out = a * x + sin(y)", arrays={"x": "f32", "y": "f32"}, scalars={"a": "f32"})
    f(x=x, y=y, a=2.0)          # compiles, tunes the block size, launches

The DSL generates C++ for the CPU backend (CUDA C++ when a CUDA device is
present), hands it to kiln.compile's big brother kiln.Kernel, and tunes it
with kiln.autotune. Run twice: the second process is served from the cache
(it prints "tuned" then "disk")."""

import re
import sys

import numpy as np

import kiln

FUNCS = {"sin", "cos", "exp", "log", "sqrt", "tanh", "fabs", "fmin", "fmax"}
CTYPES = {"f32": "float", "f64": "double", "i32": "int"}
NPTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32}


def parse(expr):
    """'out = a * x + sin(y)' -> ('out', 'a * x + sin(y)', ['a', 'x', 'y'])."""
    out, rhs = (s.strip() for s in expr.split("=", 1))
    names = sorted(set(re.findall(r"[A-Za-z_]\w*", rhs)) - FUNCS)
    if not re.fullmatch(r"[\w\s+\-*/().,]+", rhs):
        raise ValueError(f"unsupported characters in {rhs!r}")
    return out, rhs, names


def cpu_source(out, rhs, arrays, scalars, types):
    params = ["const kiln::cpu::BlockContext& ctx"]
    params += [f"const {CTYPES[types[a]]}* {a}_" for a in arrays]
    params += [f"{CTYPES[types[s]]} {s}" for s in scalars]
    params += [f"{CTYPES[types[out]]}* {out}_", "int n"]
    loads = "".join(f"    const {CTYPES[types[a]]} {a} = {a}_[i];\n" for a in arrays)
    return f"""#include "kiln/cpu_kernel.h"
#include <math.h>
template <int BLOCK, int UNROLL>
void ew({", ".join(params)}) {{
  const int begin = (int)ctx.block_idx.x * BLOCK;
  const int end = begin + BLOCK < n ? begin + BLOCK : n;
#pragma clang loop unroll_count(UNROLL)
  for (int i = begin; i < end; ++i) {{
{loads}    {out}_[i] = {rhs};
  }}
}}
"""


def cuda_source(out, rhs, arrays, scalars, types):
    params = [f"const {CTYPES[types[a]]}* {a}_" for a in arrays]
    params += [f"{CTYPES[types[s]]} {s}" for s in scalars]
    params += [f"{CTYPES[types[out]]}* {out}_", "int n"]
    loads = "".join(f"  const {CTYPES[types[a]]} {a} = {a}_[i];\n" for a in arrays)
    return f"""template <int BLOCK, int UNROLL>
__global__ void ew({", ".join(params)}) {{
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n) return;
{loads}  {out}_[i] = {rhs};
}}
"""


def elementwise(expr, arrays, scalars=None, backend=None):
    """A tuned elementwise kernel over `arrays` (name -> "f32"/"f64"/"i32")
    and `scalars` (the same): call it with them by name; it returns the
    output array (of the first array's type)."""
    out, rhs, names = parse(expr)
    scalars = dict(scalars or {})
    unknown = set(names) - set(arrays) - set(scalars)
    if unknown:
        raise ValueError(f"{expr!r} uses {sorted(unknown)}: declare them as arrays or scalars")
    types = {**arrays, **scalars, out: next(iter(arrays.values()))}
    arrays, scalars = list(arrays), list(scalars)
    if backend is None:
        backend = "cuda" if kiln._kiln._backend_available("cuda") == "" else "cpu"
    make = cpu_source if backend == "cpu" else cuda_source
    signature = ([f"{a}_: {types[a]}*" for a in arrays] + [f"{s}: {types[s]}" for s in scalars]
                 + [f"{out}_: {types[out]}*", "n: i32"])
    kernel = kiln.Kernel(make(out, rhs, arrays, scalars, types), entry="ew<{BLOCK},{UNROLL}>",
                         backend=backend, signature=signature, name="ew_" + re.sub(r"\W", "_", expr),
                         grid=lambda m: (kiln.cdiv(m["n"], m["BLOCK"]),),
                         block=lambda m: (m["BLOCK"] if backend == "cuda" else 1,))
    blocks = (128, 256, 512) if backend == "cuda" else (1024, 8192, 65536)
    tuned = kiln.autotune(space={"BLOCK": blocks, "UNROLL": (1, 4)}, key=["n"])(kernel)

    def call(**args):
        n = len(args[arrays[0]])
        result = np.empty(n, dtype=NPTYPES[types[out]])
        tuned(*[args[a] for a in arrays], *[args[s] for s in scalars], result, n)
        return result

    call.tuned = tuned
    return call


if __name__ == "__main__":
    f = elementwise("out = a * x + sin(y)", arrays={"x": "f32", "y": "f32"}, scalars={"a": "f32"})
    x = np.linspace(0, 1, 1 << 18, dtype=np.float32)
    y = np.linspace(1, 2, 1 << 18, dtype=np.float32)
    got = f(x=x, y=y, a=2.0)
    np.testing.assert_allclose(got, 2.0 * x + np.sin(y), rtol=1e-5, atol=1e-6)
    src = f.tuned.source()
    print(f"tiny_dsl: best {f.tuned.best_config}, from {src}, stats {f.tuned.stats()}")
    if len(sys.argv) > 1 and sys.argv[1] == "--expect-warm" and src != "disk":
        sys.exit("expected a warm start from the tuning cache")
