"""Read-only arrays and `const` in a signature. Kiln cannot see whether a
kernel writes an argument, so the signature says it: "x: const f32*" is
read, "x: f32*" may be written. A read-only array (writeable=False, a view
of a bytes object) passed as a T* gets a kiln.ReadOnlyWarning naming the
fix; as a const T* nothing is said; Kiln never writes a const argument
itself (restore_value, reset_to_zero), and a check compares only the
tensors a kernel may write."""

import warnings

import numpy as np
import pytest

import kiln
from conftest import SAXPY

SCALE = r"""
#include "kiln/cpu_kernel.h"
void scale_ro(const kiln::cpu::BlockContext& ctx, const float* x, float* y, float a, int n) {
  if (ctx.block_idx.x != 0) return;
  for (int i = 0; i < n; ++i) y[i] = a * x[i];
}
"""


def compiled(x_type):
    return kiln.compile(SCALE, "scale_ro", backend="cpu",
                        signature=[f"x: {x_type}", "y: f32*", "a: f32", "n: i32"])


def test_a_read_only_array_as_a_writable_pointer_warns_and_runs():
    scale = compiled("f32*")
    x = np.arange(8, dtype=np.float32)
    x.setflags(write=False)
    y = np.zeros(8, dtype=np.float32)
    with pytest.warns(kiln.ReadOnlyWarning, match=r"scale_ro: argument 'x' is a read-only array.*"
                                                   r"'x: const f32\*'"):
        scale(x, y, 2.0, 8)
    np.testing.assert_array_equal(y, 2 * x)


def test_const_takes_read_only_arrays_without_a_word():
    scale = compiled("const f32*")
    # A view of a bytes object: numpy marks it read-only, and Python holds
    # the bytes immutable.
    data = np.arange(8, dtype=np.float32).tobytes()
    x = np.frombuffer(data, dtype=np.float32)
    assert not x.flags.writeable
    y = np.zeros(8, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scale(x, y, 3.0, 8)
    np.testing.assert_array_equal(y, 3 * np.arange(8, dtype=np.float32))
    assert data == np.arange(8, dtype=np.float32).tobytes()


def test_writable_arrays_and_unsigned_calls_say_nothing():
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled("f32*")(x, y, 1.0, 8)  # writable: nothing to say
        x.setflags(write=False)
        # Without a signature Kiln knows nothing of what the kernel writes.
        kiln.compile(SCALE, "scale_ro", backend="cpu")(x, y, 1.0, np.int32(8))


def test_the_warning_as_an_error_stops_the_call():
    scale = compiled("f32*")
    x = np.ones(8, dtype=np.float32)
    x.setflags(write=False)
    y = np.zeros(8, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kiln.ReadOnlyWarning)
        with pytest.raises(kiln.ReadOnlyWarning):
            scale(x, y, 2.0, 8)
    assert (y == 0).all()


def saxpy_kernel(name, x_type="const f32*", y_type="f32*"):
    return kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu", name=name,
                       signature=["a: f32", f"x: {x_type}", f"y: {y_type}", "n: i32"],
                       grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),))


@pytest.mark.parametrize("role", ["restore_value", "reset_to_zero"])
def test_kiln_never_writes_a_const_argument(role):
    with pytest.raises(kiln.ConfigError, match=rf"{role} names 'x'.*const f32\*.*drop it"):
        kiln.autotune(configs=[kiln.Config(BLOCK=256)], key=["n"], **{role: ["x"]})(
            saxpy_kernel("saxpy_const_" + role))


def test_an_autotuned_kernel_takes_a_read_only_const_input():
    tuned = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (256, 1024)], key=["n"],
                          restore_value=["y"])(saxpy_kernel("saxpy_const_input"))
    x = np.ones(1000, dtype=np.float32)
    x.setflags(write=False)
    y = np.zeros(1000, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tuned(2.0, x, y, 1000)
    np.testing.assert_allclose(y, 2.0)

