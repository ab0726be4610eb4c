"""kiln.set_collective: the ranks of a real `mpirun --oversubscribe -np 4`
job, talking through mpi4py, reach one decision for kiln.autotune and
kiln.choose_one; one rank's cache hit serves every rank; ranks that ask
different questions, or a rank that never arrives, end with a message,
never a hang."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import SAXPY

RANKS = 4

pytestmark = pytest.mark.skipif(
    shutil.which("mpirun") is None,
    reason="[skip:mpi] mpirun is not on PATH (scripts/setup.sh installs Open MPI)")

# Every rank: its own cache directory (separate machines), its report as
# one JSON line in out.<rank>.
PRELUDE = """
import json, os, sys
rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
os.environ["KILN_CACHE_DIR"] = os.path.join(DIR, "cache%d" % (CACHE_OF.get(rank, rank)))
import numpy as np
from mpi4py import MPI
import kiln

def report(**kw):
    with open(os.path.join(DIR, "out.%d" % rank), "w") as f:
        json.dump(dict(rank=rank, **kw), f)
"""

KERNEL = """
saxpy = kiln.autotune(space={"BLOCK": [32, 64, 128, 256, 512]}, key=["n"])(
    kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu", name="saxpy_ranks",
                signature=["a: f32", "x: const f32*", "y: f32*", "n: i32"],
                grid=lambda m: (kiln.cdiv(m["n"], m["BLOCK"]),), block=(1,)))

def call(n):
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    saxpy(np.float32(2), x, y, n)
    assert np.allclose(y, 2 * x + 1)
    return saxpy
"""


def mpi_job(tmp_path, body, cache_of=None, timeout=240, env=None):
    """Runs `body` on every rank; returns (completed process, reports by rank)."""
    script = tmp_path / "rank.py"
    script.write_text(f"DIR = {str(tmp_path)!r}\nCACHE_OF = {cache_of or {}!r}\n"
                      f"SAXPY = {SAXPY!r}\n" + PRELUDE + KERNEL + textwrap.dedent(body))
    run_env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1", **(env or {}))
    run_env.pop("KILN_CACHE_DIR", None)
    proc = subprocess.run(["mpirun", "--oversubscribe", "-np", str(RANKS), sys.executable,
                           str(script)], env=run_env, capture_output=True, text=True,
                          timeout=timeout)
    reports = {}
    for r in range(RANKS):
        path = tmp_path / f"out.{r}"
        if path.exists():
            reports[r] = json.loads(path.read_text())
    return proc, reports


def require_all(proc, reports):
    assert proc.returncode == 0 and len(reports) == RANKS, (
        f"mpirun exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")


@pytest.mark.parametrize("strategy", ["broadcast", "parallel", "merge"])
def test_every_rank_serves_the_identical_autotune_decision(tmp_path, strategy):
    proc, reports = mpi_job(tmp_path, f"""
        kiln.set_collective(MPI.COMM_WORLD, strategy={strategy!r})
        k = call(4096)
        report(config=k.best_config.kwargs, source=k.source(),
               measured=len([m for m in k.measurements() if m["status"] == "ok"]))
    """)
    require_all(proc, reports)
    configs = {json.dumps(r["config"], sort_keys=True) for r in reports.values()}
    assert len(configs) == 1, reports
    assert all(r["source"] == "agreed" for r in reports.values()), reports
    measured = [reports[r]["measured"] for r in range(RANKS)]
    if strategy == "broadcast":  # rank 0 alone measures
        assert measured[0] >= 1 and measured[1:] == [0] * (RANKS - 1), measured
    elif strategy == "merge":  # everyone measures everything
        assert all(m == measured[0] and m >= 1 for m in measured), measured
    else:  # the space is dealt out: no rank measures it all
        assert all(m < 5 for m in measured) and sum(measured) >= 5, measured


def test_one_ranks_cache_hit_serves_every_rank_and_nobody_measures(tmp_path):
    # Rank 2's cache (cache2) holds a decision from an earlier, lone run.
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache2"))
    code = f"SAXPY = {SAXPY!r}\nimport numpy as np, kiln\n" + KERNEL + textwrap.dedent("""
        k = call(4096)
        print(json.dumps(k.best_config.kwargs))
    """)
    lone = subprocess.run([sys.executable, "-c", "import json\n" + code], env=env,
                          capture_output=True, text=True, timeout=240)
    assert lone.returncode == 0, lone.stderr
    cached = json.loads(lone.stdout.strip().splitlines()[-1])
    proc, reports = mpi_job(tmp_path, """
        kiln.set_collective(MPI.COMM_WORLD, strategy="merge")
        k = call(4096)
        report(config=k.best_config.kwargs, source=k.source(), benchmarked=k.stats()["benchmarked"])
    """)
    require_all(proc, reports)
    assert all(r["config"] == cached for r in reports.values()), (cached, reports)
    assert all(r["benchmarked"] == 0 for r in reports.values()), reports


def test_choose_one_ranks_agree_and_share_the_profiling(tmp_path):
    proc, reports = mpi_job(tmp_path, """
        class Noisy(kiln.Runner):
            version = "1"
            def __init__(self):
                self.seen = set()
            def get_valid_tactics(self, inputs, profile):
                return [0, 1, 2, 3, 4, 5, 6, 7]
            def forward(self, inputs, tactic=-1, do_preparation=False):
                if do_preparation:
                    return
                self.seen.add(tactic)
                x, out = inputs
                out[...] = 2 * x
                # Each rank's timings favour another tactic: only an agreed
                # decision makes every rank pick the same one.
                for _ in range((tactic - rank) % 8):
                    np.sum(x * x)
        kiln.set_collective(MPI.COMM_WORLD, strategy="parallel")
        r = Noisy()
        x = np.ones((64, 256), dtype=np.float32)
        with kiln.tuning():
            _, tactic = kiln.choose_one("noisy_op", [r], [x, np.zeros_like(x)])
        report(tactic=tactic, seen=sorted(r.seen))
    """)
    require_all(proc, reports)
    tactics = {r["tactic"] for r in reports.values()}
    assert len(tactics) == 1 and tactics != {-1}, reports
    # Parallel: each rank ran its share (2 of the 8 tactics), and together all.
    seen = [set(reports[r]["seen"]) for r in range(RANKS)]
    assert all(len(s) == 8 // RANKS for s in seen), seen
    assert set().union(*seen) == set(range(8)), seen


def test_ranks_asking_about_different_shapes_are_told_which(tmp_path):
    proc, reports = mpi_job(tmp_path, """
        kiln.set_collective(MPI.COMM_WORLD)
        try:
            call(4096 if rank != 1 else 2048)
            report(error="")
        except kiln.KilnError as e:
            report(error=str(e))
    """)
    require_all(proc, reports)
    for r in reports.values():
        assert "rank 1" in r["error"] and "same" in r["error"], reports


def test_a_rank_that_never_arrives_ends_the_job_with_a_message(tmp_path):
    proc, reports = mpi_job(tmp_path, """
        kiln.set_collective(MPI.COMM_WORLD, timeout_s=5)
        if rank == 3:
            import time
            time.sleep(60)  # never makes the call the others wait in
        call(4096)
        report(done=True)
    """, timeout=120)
    assert proc.returncode != 0
    assert "never arrived" in proc.stderr and "KILN_DISTRIBUTED_TIMEOUT_S" in proc.stderr, (
        proc.stderr)


def test_a_group_without_collectives_is_refused_with_the_fix():
    import kiln
    with pytest.raises(kiln.ConfigError, match="all_gather"):
        kiln.set_collective(object())
    with pytest.raises(kiln.ConfigError, match="strategy"):
        kiln.set_collective(None, strategy="gossip")
