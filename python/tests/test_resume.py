"""An interrupted tuning resumes from Python (issue 57 §4): a real
interpreter killed once some measurements are in the journal beside the
tuning cache, or stopped by its budget, and a second one that measures
only what is missing, counts the rest in stats()["resumed"] and removes
the journal when it finishes (docs/caching.md, "The tuning journal")."""

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import run_python

# Each call sleeps a few ms: configs land one by one.
NAP = r"""
#include "kiln/cpu_kernel.h"
extern "C" int usleep(unsigned int);
template <int BLOCK>
void saxpy(const kiln::cpu::BlockContext& ctx, float a, const float* x, float* y, int n) {
  if (ctx.block_idx.x == 0) usleep(3000 + BLOCK);
  const int begin = (int)ctx.block_idx.x * BLOCK;
  const int end = begin + BLOCK < n ? begin + BLOCK : n;
  for (int i = begin; i < end; ++i) y[i] = a * x[i] + y[i];
}
"""

BLOCKS = (64, 128, 256, 512, 1024, 2048)

SCRIPT = """
import os
{env}
import numpy as np, kiln
k = kiln.Kernel({source!r}, entry="saxpy<{{BLOCK}}>", backend="cpu", name="saxpy_resume",
                signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),))
t = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in {blocks!r}], key=["n"],
                  restore_value=["y"], search="exhaustive"{extra})(k)
x = np.ones(4096, dtype=np.float32); y = np.zeros(4096, dtype=np.float32)
t(2.0, x, y, 4096)
s = t.stats()
print(s["resumed"], s["compiled"] + s["artifact_hits"], t.source() or "-")
"""


def script(env="", extra=""):
    return SCRIPT.format(env=env, source=NAP, blocks=BLOCKS, extra=extra)


def journal_lines(cache):
    return sum(len([l for l in f.read_text().splitlines() if l.strip()])
               for f in (pathlib.Path(cache) / "tuning" / "journal").glob("*.jsonl"))


def run_killed(cache, lines):
    """A tuning interpreter, SIGKILLed once `lines` results are journaled;
    returns the lines kept."""
    env = dict(os.environ, KILN_CACHE_DIR=cache)
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script())], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    while journal_lines(cache) < lines and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    return journal_lines(cache)


def test_a_killed_interpreter_resumes_where_it_stopped(fresh_cache):
    kept = run_killed(fresh_cache, 3)
    assert 3 <= kept < len(BLOCKS), f"{kept} lines kept: not stopped part way"
    resumed, built, source = run_python(script(), fresh_cache).split()
    # Every kept config but the default (the outputs' reference) is resumed;
    # built: the rest, and the winner again when it was resumed.
    assert kept - 1 <= int(resumed) <= kept
    assert len(BLOCKS) - int(resumed) <= int(built) <= len(BLOCKS) - int(resumed) + 1
    assert source == "tuned"
    assert journal_lines(fresh_cache) == 0, "a finished run removes its journal"


def test_a_spent_budget_is_continued_by_the_next_tuning(fresh_cache):
    # Every artifact built first (another n), so the budget goes to benchmarks.
    run_python(script().replace("4096)\ns =", "2048)\ns ="), fresh_cache)
    first = run_python(script(extra=", budget_s=0.15"), fresh_cache).split()
    kept = journal_lines(fresh_cache)
    assert first[0] == "0"
    if not 2 <= kept < len(BLOCKS):

        pytest.skip(f"[skip:host] the budget landed {kept} configs of {len(BLOCKS)}")
    # Its best so far was saved: tuning the key again is a retune, which
    # goes on from the journal.
    resumed, _, source = run_python(script(env='os.environ["KILN_RETUNE"] = "1"'),
                                    fresh_cache).split()
    assert int(resumed) == kept - 1
    assert source == "tuned"
    assert journal_lines(fresh_cache) == 0
