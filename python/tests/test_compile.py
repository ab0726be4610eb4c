"""kiln.compile: source text in, a launchable, cached kernel out."""

import numpy as np
import pytest

import kiln
from conftest import run_python

ADD = r"""
#include "kiln/cpu_kernel.h"
void add(const kiln::cpu::BlockContext& ctx, const float* a, const float* b, float* out, int n) {
  const int per = (n + (int)ctx.grid_dim.x - 1) / (int)ctx.grid_dim.x;
  const int begin = (int)ctx.block_idx.x * per;
  for (int i = begin; i < begin + per && i < n; ++i) out[i] = a[i] + b[i];
}
"""


def test_compile_and_launch():
    k = kiln.compile(ADD, "add", backend="cpu")
    a = np.arange(1000, dtype=np.float32)
    b = np.full(1000, 2.0, dtype=np.float32)
    out = np.zeros(1000, dtype=np.float32)
    k(a, b, out, 1000, grid=(4,))
    np.testing.assert_array_equal(out, a + 2)
    assert k.name == "add" and k.backend == "cpu"


def test_second_compile_is_a_cache_hit():
    src = ADD + "\n// variant for the cache test\n"
    first = kiln.compile(src, "add", backend="cpu")
    again = kiln.compile(src, "add", backend="cpu")
    assert not first.from_cache
    assert again.from_cache


def test_new_process_is_served_from_disk(fresh_cache):
    code = """
        import kiln
        src = %r
        k = kiln.compile(src, "add", backend="cpu")
        print("from_cache", k.from_cache)
    """ % (ADD,)
    assert "from_cache False" in run_python(code, fresh_cache)
    assert "from_cache True" in run_python(code, fresh_cache)


def test_template_entry_options_and_headers():
    src = r"""
#include "kiln/cpu_kernel.h"
#include "scale.h"
template <int K>
void scale(const kiln::cpu::BlockContext&, float* x, int n) {
  for (int i = 0; i < n; ++i) x[i] *= K * SCALE_EXTRA;
}
"""
    k = kiln.compile(src, "scale<3>", backend="cpu", options=["-DSCALE_EXTRA=2"],
                     headers={"scale.h": "#pragma once\n"})
    x = np.ones(8, dtype=np.float32)
    k(x, 8)
    np.testing.assert_array_equal(x, np.full(8, 6.0, dtype=np.float32))


def test_compile_error_carries_the_log():
    with pytest.raises(kiln.CompileError) as e:
        kiln.compile("void broken( {", "broken", backend="cpu")
    assert "error" in e.value.log.lower()
    assert isinstance(e.value, kiln.KilnError)


def test_signature_checks_arguments():
    k = kiln.compile(ADD, "add", backend="cpu", signature=["a: f32*", "b: f32*", "out: f32*", "n: i32"])
    a = np.zeros(4, dtype=np.float64)
    with pytest.raises(kiln.ArgumentError, match="'a'.*f64.*f32"):
        k(a, a, a, 4)
    f = np.zeros(4, dtype=np.float32)
    with pytest.raises(kiln.ArgumentError, match="takes 4 arguments"):
        k(f, f, 4)
    with pytest.raises(kiln.ArgumentError, match="does not fit in i32"):
        k(f, f, f, 2**40)


def test_bad_grid_and_backend():
    k = kiln.compile(ADD, "add", backend="cpu")
    f = np.zeros(4, dtype=np.float32)
    with pytest.raises(kiln.ConfigError, match="grid"):
        k(f, f, f, 4, grid=(2**32,))
    with pytest.raises(kiln.ConfigError, match="backend"):
        kiln.compile(ADD, "add", backend="tpu")


def test_wrong_argument_types_are_refused_by_the_kernel_signature():
    k = kiln.compile(ADD, "add", backend="cpu")
    f = np.zeros(4, dtype=np.float32)
    # n as a float: the CPU launcher compares the packed types with the
    # kernel's own signature.
    with pytest.raises(kiln.KilnError):
        k(f, f, f, 4.0)


def test_an_empty_grid_launches_nothing_but_the_call_is_still_checked():
    # As in Triton: a grid of cdiv(n, BLOCK) with n = 0 (an empty batch) is a no-op.
    k = kiln.compile(ADD, "add", backend="cpu")
    out = np.full(4, 7.0, dtype=np.float32)
    f = np.ones(4, dtype=np.float32)
    k(f, f, out, 4, grid=(0,))
    k(f, f, out, 4, grid=(4, 0))
    k(f, f, out, 4, grid=0)
    np.testing.assert_array_equal(out, 7.0)  # nothing ran
    with pytest.raises(kiln.ConfigError, match="argument 2 is a str"):  # still converted
        k(f, f, "out", 4, grid=(0,))
    with pytest.raises(kiln.ConfigError, match="from 0"):
        k(f, f, out, 4, grid=(-1,))
    with pytest.raises(kiln.ConfigError, match="from 1"):
        k(f, f, out, 4, grid=(1,), block=(0,))
    k(f, f, out, 4, grid=(2,))
    np.testing.assert_array_equal(out, 2.0)
