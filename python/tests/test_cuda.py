"""CUDA paths: run on a machine with a CUDA device, skipped elsewhere; what
a machine without one gets is a clear error, never a crash. Skip reasons
start with their class ([skip:gpu]: scripts/skip_report.py)."""

import numpy as np
import pytest

import kiln
import kiln._kiln as native

HAS_CUDA = native._backend_available("cuda") == ""
CUDA_SRC = r"""
extern "C" __global__ void fill(float* y, float v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = v;
}
"""


@pytest.mark.skipif(HAS_CUDA, reason="[skip:gpu-present] this machine has a CUDA device")
def test_cuda_without_a_device_is_a_clear_error():
    with pytest.raises(kiln.UnavailableError, match="CUDA|cuda"):
        kiln.compile(CUDA_SRC, "fill", backend="cuda")
    assert native._backend_available("cuda") != ""


@pytest.mark.skipif(not HAS_CUDA, reason="[skip:gpu] no CUDA device")
def test_cuda_compile_launch_and_stream():
    cupy = pytest.importorskip("cupy", reason="[skip:cupy] CuPy is not installed")
    k = kiln.compile(CUDA_SRC, "fill", backend="cuda")
    y = cupy.zeros(1000, dtype=cupy.float32)
    s = cupy.cuda.Stream()
    k(y, 3.0, 1000, grid=(4,), block=(256,), stream=s)
    s.synchronize()
    assert float(y.sum()) == 3000.0


def test_streams_on_the_cpu():
    k = kiln.compile('#include "kiln/cpu_kernel.h"\nvoid nop(const kiln::cpu::BlockContext&, float* y) {}',
                     "nop", backend="cpu")
    y = np.zeros(1, dtype=np.float32)
    k(y, stream=0)  # the default stream
    k(y, stream=1234)  # the CPU runs every launch in order: any handle will do

    class FakeStream:
        cuda_stream = 0

    k(y, stream=FakeStream())
    with pytest.raises(kiln.ConfigError, match="stream=str is not a stream"):
        k(y, stream="fast")
