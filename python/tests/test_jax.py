"""JAX on the CPU as a real DLPack producer and consumer (issue 57 section 5).

JAX arrays are immutable: one passed where the kernel may write (a T*, not
const T*, or a name of outputs=) is refused with a kiln.ArgumentError
naming it and the fix, before anything runs; as a const T* it is read in
place. Kiln asks every producer for a DLPack 1.x capsule
(__dlpack__(max_version=...)), whose flags say read-only, and asks again
the legacy way when the producer does not take max_version. What a kernel
writes into a numpy array goes to JAX through DLPack without a copy (XLA's
CPU client copies a buffer that is not 64-byte aligned).

jax is imported by the `jnp` fixture, not at module level: collecting the
suite does not pay its import (about 1.3 s)."""

import warnings

import numpy as np
import pytest

import kiln
from conftest import SAXPY

SCALE = r"""
#include "kiln/cpu_kernel.h"
void scale_jax(const kiln::cpu::BlockContext& ctx, const float* x, float* y, float a, int n) {
  if (ctx.block_idx.x != 0) return;
  for (int i = 0; i < n; ++i) y[i] = a * x[i];
}
"""

# Writes the address it was given for x: whether Kiln passed the producer's
# own memory or a copy of it.
ADDRESS = r"""
#include "kiln/cpu_kernel.h"
void address_of(const kiln::cpu::BlockContext& ctx, const float* x, long long* out) {
  if (ctx.block_idx.x == 0) out[0] = (long long)x;
}
"""


@pytest.fixture(scope="module")
def jnp():
    import jax.numpy

    return jax.numpy


def aligned_empty(n, dtype=np.float32, align=64):
    """A numpy array whose data is `align`-byte aligned: XLA's CPU client
    takes a DLPack buffer without a copy only when it is 64-byte aligned."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.empty(n * itemsize + align, dtype=np.uint8)
    offset = (-raw.ctypes.data) % align
    return raw[offset:offset + n * itemsize].view(dtype)


def scale_kernel(x_type="const f32*", y_type="f32*"):
    return kiln.compile(SCALE, "scale_jax", backend="cpu",
                        signature=[f"x: {x_type}", f"y: {y_type}", "a: f32", "n: i32"])


def saxpy(name, x_type="const f32*", y_type="f32*"):
    return kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu", name=name,
                       signature=["a: f32", f"x: {x_type}", f"y: {y_type}", "n: i32"],
                       grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),))


def tuned_saxpy(name, **options):
    return kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (256, 1024)], key=["n"],
                         **options)(saxpy(name))


class Producer:
    """A DLPack-only producer (no buffer protocol) over `array`, recording
    the keywords of each __dlpack__ call."""

    def __init__(self, array):
        self.array = array
        self.calls = []

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class LegacyProducer(Producer):
    """A producer from before DLPack 1.x: __dlpack__ takes no max_version."""

    def __dlpack__(self, stream=None):
        self.calls.append({"stream": stream})
        return self.array.__dlpack__()


def test_a_jax_input_to_a_tuned_kernel_gives_the_right_result(jnp):
    tuned = tuned_saxpy("saxpy_jax_input", restore_value=["y"])
    x = jnp.arange(3000, dtype=jnp.float32)
    y = np.ones(3000, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a const input from JAX: nothing to say
        tuned(2.0, x, y, 3000)
    np.testing.assert_array_equal(y, 2.0 * np.asarray(x) + 1.0)
    assert tuned.stats()["misses"] == 1


def test_a_jax_input_reaches_the_kernel_without_a_copy(jnp):
    address = kiln.compile(ADDRESS, "address_of", backend="cpu",
                           signature=["x: const f32*", "out: i64*"])
    x = jnp.arange(16, dtype=jnp.float32)
    out = np.zeros(1, dtype=np.int64)
    address(x, out)
    assert out[0] == x.unsafe_buffer_pointer()


def test_a_jax_input_to_a_fixed_config_kernel(jnp):
    fixed = saxpy("saxpy_jax_fixed")
    x = jnp.full(1000, 3.0, dtype=jnp.float32)
    y = np.zeros(1000, dtype=np.float32)
    fixed(1.5, x, y, 1000, BLOCK=256)
    np.testing.assert_array_equal(y, 4.5)


@pytest.mark.parametrize("entry", ["compile", "fixed", "tuned"])
def test_a_jax_array_where_the_kernel_writes_is_refused(jnp, entry):
    x = np.arange(1000, dtype=np.float32)
    y = jnp.full(1000, 7.0, dtype=jnp.float32)
    before = np.array(y)
    if entry == "compile":
        call = lambda: scale_kernel()(x, y, 2.0, 1000)  # noqa: E731
    elif entry == "fixed":
        call = lambda: saxpy("saxpy_jax_refused_fixed")(2.0, x, y, 1000, BLOCK=256)  # noqa: E731
    else:
        call = lambda: tuned_saxpy("saxpy_jax_refused_tuned")(2.0, x, y, 1000)  # noqa: E731
    with pytest.raises(kiln.ArgumentError,
                       match=r"argument 'y' \(f32\*\): a JAX array, and the kernel may write this "
                             r"argument \(the signature declares it f32\*, not const f32\*\), but "
                             r"JAX arrays are immutable: pass a numpy array.*'y: const f32\*'"):
        call()
    np.testing.assert_array_equal(np.asarray(y), before)  # nothing written


def test_a_jax_array_kiln_would_restore_is_refused_naming_the_role(jnp):
    tuned = tuned_saxpy("saxpy_jax_restore", restore_value=["y"])
    y = jnp.zeros(1000, dtype=jnp.float32)
    with pytest.raises(kiln.ArgumentError,
                       match=r"argument 'y'.*a JAX array.*Kiln writes it: restore_value"):
        tuned(1.0, np.ones(1000, dtype=np.float32), y, 1000)
    assert not np.asarray(y).any()
    assert tuned.stats()["misses"] == 0  # refused before tuning


def test_a_const_jax_array_named_in_outputs_is_refused(jnp):
    # outputs= says the kernel writes x, whatever its const says.
    tuned = tuned_saxpy("saxpy_jax_outputs", outputs=["x", "y"])
    x = jnp.ones(1000, dtype=jnp.float32)
    with pytest.raises(kiln.ArgumentError,
                       match=r"argument 'x' \(f32\*\): a JAX array.*named in outputs=.*"
                             r"drop it from outputs="):
        tuned(1.0, x, np.zeros(1000, dtype=np.float32), 1000)


def test_kiln_asks_for_dlpack_1_with_max_version():
    producer = Producer(np.arange(8, dtype=np.float32))
    y = np.zeros(8, dtype=np.float32)
    scale_kernel()(producer, y, 2.0, 8)
    np.testing.assert_array_equal(y, 2 * np.arange(8, dtype=np.float32))
    assert producer.calls and producer.calls[0].get("max_version", (0, 0))[0] >= 1


def test_kiln_asks_jax_with_max_version(jnp):
    producer = Producer(jnp.arange(8, dtype=jnp.float32))
    y = np.zeros(8, dtype=np.float32)
    scale_kernel()(producer, y, 3.0, 8)
    np.testing.assert_array_equal(y, 3 * np.arange(8, dtype=np.float32))
    assert producer.calls[0].get("max_version", (0, 0))[0] >= 1


def test_a_producer_without_max_version_is_asked_the_legacy_way():
    producer = LegacyProducer(np.arange(8, dtype=np.float32))
    y = np.zeros(8, dtype=np.float32)
    scale_kernel()(producer, y, 2.0, 8)
    np.testing.assert_array_equal(y, 2 * np.arange(8, dtype=np.float32))
    assert producer.calls == [{"stream": None}]


def test_the_dlpack_read_only_flag_warns_for_a_writable_parameter():
    # A DLPack-only producer has no buffer protocol: only DLPack 1.x's flag
    # says that its memory is read-only.
    data = np.zeros(8, dtype=np.float32)
    data.setflags(write=False)
    with pytest.warns(kiln.ReadOnlyWarning, match=r"argument 'y' is a read-only array"):
        scale_kernel()(np.ones(8, dtype=np.float32), Producer(data), 2.0, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as a const input: nothing to say
        scale_kernel()(Producer(data), np.zeros(8, dtype=np.float32), 2.0, 8)


def test_a_numpy_output_goes_to_jax_without_a_copy(jnp):
    x = jnp.arange(256, dtype=jnp.float32)
    y = aligned_empty(256)
    scale_kernel()(x, y, 0.5, 256)
    result = jnp.from_dlpack(y)
    assert result.unsafe_buffer_pointer() == y.ctypes.data  # JAX reads Kiln's output in place
    np.testing.assert_array_equal(np.asarray(result), 0.5 * np.arange(256, dtype=np.float32))


def test_kilns_views_in_a_reference_go_to_jax_without_a_copy(jnp):
    # A reference function gets Kiln's views of the call's arguments (numpy
    # arrays over their memory): JAX reads them in place, and the expected
    # output is written back through the view.
    seen = []

    def reference(a, x, y, n):
        xj = jnp.from_dlpack(x)
        seen.append(xj.unsafe_buffer_pointer() == x.ctypes.data)
        y[:] = np.asarray(a * xj) + y

    tuned = tuned_saxpy("saxpy_jax_reference", restore_value=["y"], check=True,
                        reference=reference)
    x = aligned_empty(2000)
    x[:] = np.arange(2000, dtype=np.float32)
    y = aligned_empty(2000)
    y[:] = 1.0
    tuned(3.0, x, y, 2000)
    np.testing.assert_array_equal(y, 3.0 * x + 1.0)
    assert seen and all(seen)
    assert all(m["status"] == "ok" for m in tuned.measurements())


class Double(kiln.Runner):
    """out = 2 * x, from Kiln's views of the inputs."""

    version = "1"

    def get_valid_tactics(self, inputs, profile):
        return [0, 1]

    def forward(self, inputs, tactic=-1, do_preparation=False):
        if not do_preparation:
            x, out = inputs
            out[...] = 2 * x


def test_choose_one_takes_jax_inputs(jnp, tmp_path):
    # choose_one has no signature: Kiln cannot tell what a runner writes,
    # so a JAX input passes without a word, as with kiln.compile without
    # one (no const to declare: main warned to declare one).
    x = jnp.arange(64, dtype=jnp.float32)
    out = np.zeros(64, dtype=np.float32)
    with kiln.tuning(cache=str(tmp_path / "tuning.json")), warnings.catch_warnings():
        warnings.simplefilter("error")
        runner, tactic = kiln.choose_one("double_jax", [Double()], [x, out])
    runner.forward([np.asarray(x), out], tactic)
    assert tactic in (0, 1)
    np.testing.assert_array_equal(out, 2 * np.arange(64, dtype=np.float32))
