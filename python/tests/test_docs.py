"""Every ```python snippet of docs/python.md runs, in order, in one fresh
interpreter; every example under examples/python runs."""

import pathlib
import re
import subprocess
import sys

import pytest

from conftest import run_python

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_docs_python_md_snippets(fresh_cache):
    text = (ROOT / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 5
    run_python("\n".join(blocks), fresh_cache)


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples" / "python").glob("*.py")))
def test_example_runs(example, fresh_cache):
    import os

    env = dict(os.environ, KILN_CACHE_DIR=fresh_cache)
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / example)], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def test_tiny_dsl_is_warm_in_a_second_process(fresh_cache):
    import os

    env = dict(os.environ, KILN_CACHE_DIR=fresh_cache)
    script = str(ROOT / "examples" / "python" / "tiny_dsl.py")
    cold = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, timeout=600)
    assert cold.returncode == 0 and "from tuned" in cold.stdout, cold.stdout + cold.stderr
    warm = subprocess.run([sys.executable, script, "--expect-warm"], env=env, capture_output=True,
                          text=True, timeout=600)
    assert warm.returncode == 0 and "from disk" in warm.stdout, warm.stdout + warm.stderr
