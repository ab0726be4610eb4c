"""Every test process uses a cache directory of its own session: set before
kiln is imported (Kiln reads its environment once)."""

import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

_CACHE = tempfile.mkdtemp(prefix="kiln-pytest-")
os.environ["KILN_CACHE_DIR"] = _CACHE

# The CPU kernels the tests tune. Each takes the block context first.
SAXPY = r"""
#include "kiln/cpu_kernel.h"
template <int BLOCK>
void saxpy(const kiln::cpu::BlockContext& ctx, float a, const float* x, float* y, int n) {
  const int begin = (int)ctx.block_idx.x * BLOCK;
  const int end = begin + BLOCK < n ? begin + BLOCK : n;
  for (int i = begin; i < end; ++i) y[i] = a * x[i] + y[i];
}
"""


@pytest.fixture
def cache_dir():
    return _CACHE


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """A cache directory of the test's own, for child processes."""
    d = tmp_path / "cache"
    d.mkdir()
    return str(d)


def run_python(code: str, cache: str | None = None, timeout: float = 300) -> str:
    """Runs `code` in a new interpreter (the same venv) and returns its
    stdout; fails the test with its stderr when it exits non-zero."""
    env = dict(os.environ)
    if cache is not None:
        env["KILN_CACHE_DIR"] = cache
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        pytest.fail(f"child exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}")
    return r.stdout
