"""Odd launch arguments of kiln.compile kernels are errors naming the
argument and the fix: never a bare RuntimeError('std::bad_cast') from a
failed nanobind cast, never a pointer the kernel walks off the end of."""

import numpy as np
import pytest

import kiln
from conftest import SAXPY

SCALE = r"""
#include "kiln/cpu_kernel.h"
void scale_args(const kiln::cpu::BlockContext& ctx, const float* x, float* y, float a, int n) {
  if (ctx.block_idx.x != 0) return;
  for (int i = 0; i < n; ++i) y[i] = a * x[i];
}
"""


@pytest.fixture(scope="module")
def scale():
    return kiln.compile(SCALE, "scale_args", backend="cpu")


@pytest.fixture(scope="module")
def scale_ptr():
    return kiln.compile(SCALE, "scale_args", backend="cpu",
                        signature=["x: f32*", "y: void*", "a: f32", "n: i32"])


def test_numpy_scalars_are_inferred_by_dtype(scale):
    # Documented; str() of the dtype used to be a failed cast.
    x = np.arange(4, dtype=np.float32)
    y = np.zeros_like(x)
    scale(x, y, np.float32(3), np.int32(4))
    assert (y == 3 * x).all()
    with pytest.raises(kiln.ConfigError, match="float16 scalar"):
        scale(x, y, np.float16(3), 4)


def test_int_beyond_64_bits_names_the_argument(scale):
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(kiln.ArgumentError, match="argument 3 .*64 bits"):
        scale(x, x.copy(), 1.0, 2**70)


@pytest.mark.parametrize("signature", [None, ["x: f32*", "y: f32*", "a: f32", "n: i32"]])
def test_negative_strides_are_refused(signature):
    # The pointer of x[::-1] is its last element: a kernel reading forward
    # from it reads past the buffer.
    k = kiln.compile(SCALE, "scale_args", backend="cpu", signature=signature)
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(kiln.ArgumentError, match="negative stride.*ascontiguousarray"):
        k(x[::-1], np.zeros(8, dtype=np.float32), 1.0, 8)


@pytest.mark.parametrize("pointer", [-1, 2**70, (-1, 16), (0, -4)])
def test_bad_addresses_are_named(scale_ptr, pointer):
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(kiln.ArgumentError, match="'y'.*2\\^64-1"):
        scale_ptr(x, pointer, 1.0, 4)


def test_bad_stream_handle_is_named(scale):
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(kiln.ConfigError, match="stream=-1.*2\\^64-1"):
        scale(x, x.copy(), 1.0, 4, stream=-1)


def test_launch_extents_take_numpy_ints_and_refuse_negatives(scale):
    x = np.arange(4, dtype=np.float32)
    y = np.zeros_like(x)
    scale(x, y, 2.0, 4, grid=(np.int64(2),), block=np.int32(1), shared_bytes=np.int64(0))
    assert (y == 2 * x).all()
    with pytest.raises(kiln.ConfigError, match="shared_bytes is -1: give a non-negative int"):
        scale(x, y, 2.0, 4, shared_bytes=-1)


@pytest.mark.parametrize("role", ["restore_value", "reset_to_zero"])
def test_a_read_only_array_where_kiln_writes_is_refused(role):
    # restore_value saves and rewrites y, reset_to_zero zeroes it: a
    # read-only y must be refused, not written behind numpy's back.
    tuned = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (256, 1024)], key=["n"],
                          **{role: ["y"]})(
        kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu", name="saxpy_ro_" + role,
                    signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                    grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),)))
    x = np.ones(1000, dtype=np.float32)
    y = np.zeros(1000, dtype=np.float32)
    y.setflags(write=False)
    with pytest.raises(kiln.ArgumentError, match=r"'y'.*read-only.*" + role):
        tuned(2.0, x, y, 1000)
    assert (y == 0).all()
    x.setflags(write=False)  # an input may be read-only (a warning: "x: f32*" may be written)
    y2 = np.zeros(1000, dtype=np.float32)
    with pytest.warns(kiln.ReadOnlyWarning, match="'x: const f32\\*'"):
        tuned(2.0, x, y2, 1000)
    if role == "restore_value":
        np.testing.assert_allclose(y2, 2.0)


# A dtype object among the arguments read .dtype off it: a bare
# AttributeError.
def test_a_dtype_among_the_arguments_is_named(scale):
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(kiln.ConfigError, match="argument 2 is a"):
        scale(x, np.zeros_like(x), np.dtype("float32"), 4)


# A keyword argument gave nanobind's dump of the binding's signature.
def test_a_keyword_argument_is_named(scale):
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(kiln.ConfigError, match="keyword argument 'n'.*positional"):
        scale(x, np.zeros_like(x), 3.0, n=4)
    y = np.zeros_like(x)
    scale(x, y, 3.0, 4, grid=1, block=1, shared_bytes=0, stream=None)  # the launch keywords
    assert (y == 3 * x).all()


# A tensor's dtype is named as numpy names it ("code 1 bits 16" before).
def test_a_tensor_dtype_is_named_as_numpy_names_it(scale_ptr):
    with pytest.raises(kiln.ArgumentError, match="dtype is uint16"):
        scale_ptr(np.zeros(4, np.uint16), np.zeros(4, np.float32), 1.0, 4)
