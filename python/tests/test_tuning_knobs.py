"""The search and measurement keywords of kiln.autotune, and the tuning
overrides from the environment (issue 57 §2), each in a real interpreter:
KILN_SEARCH, KILN_EFFORT, KILN_BUDGET_S win over the declaration;
KILN_PRINT_AUTOTUNING prints a line per tuning; KILN_AUTOTUNE_LOG appends
every measurement as a JSON line; a bad value is a warning, not a failure."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import SAXPY

# The default, BLOCK=16, naps 2 ms a call: it never wins, so a key's winner
# is a warm start seed for the next.
SOURCE = SAXPY.replace("int n) {\n", "int n) {\n  if (BLOCK == 16 && ctx.block_idx.x == 0) usleep(2000);\n").replace(
    "template <int BLOCK>", 'extern "C" int usleep(unsigned int);\ntemplate <int BLOCK>')

SCRIPT = """
import numpy as np, kiln
k = kiln.Kernel({source!r}, entry="saxpy<{{BLOCK}}>", backend="cpu", name="saxpy_knobs",
                signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),))
t = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (16, 256, 1024, 4096)], key=["n"],
                  default=kiln.Config(BLOCK=16), restore_value=["y"], {knobs})(k)
for n in {sizes}:
    x = np.ones(n, dtype=np.float32); y = np.zeros(n, dtype=np.float32)
    try:
        t(2.0, x, y, n)
        assert (y == 2.0).all()
    except kiln.NoValidConfigError as e:
        print("no valid config")
ms = t.measurements()
s = t.stats()
print(json.dumps({{"ok": sum(m["status"] == "ok" for m in ms), "measured": len(ms),
                  "reps": [m.get("reps") for m in ms if m["status"] == "ok"],
                  "warm_started": s["warm_started"], "finalists": s["finalists"]}}))
"""


def tune(cache, knobs="", env=None, sizes=(65536,)):
    """Runs a tuning in a child interpreter; (its JSON line, its stderr)."""
    code = "import json\n" + SCRIPT.format(source=SOURCE, knobs=knobs or "search='auto'",
                                          sizes=list(sizes))
    full = dict(os.environ, KILN_CACHE_DIR=cache)
    for name in ("KILN_SEARCH", "KILN_EFFORT", "KILN_BUDGET_S", "KILN_PRINT_AUTOTUNING",
                 "KILN_AUTOTUNE_LOG", "KILN_TUNING", "KILN_RETUNE"):
        full.pop(name, None)
    full.update(env or {})
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        pytest.fail(f"child exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def test_repetitions_warmup_cold_cache_graph_and_deadlines_reach_the_measurements(fresh_cache):
    out, _ = tune(fresh_cache, "min_reps=4, max_reps=4, warmup=2, early_stop=0, cold_cache=True, "
                               "cuda_graph=True, delay_us=1, compile_deadline_s=60, deadline_s=5")
    assert out["ok"] == 4
    assert out["reps"] == [4, 4, 4, 4]


def test_finalists_and_warm_start_can_be_turned_off(fresh_cache, tmp_path):
    # A second key of the kernel: its neighbour's winner (not the default)
    # is measured first.
    on, _ = tune(fresh_cache, sizes=(65536, 32768))
    # Finalists are re-measured only where two or more configs ran within
    # reach of the best (lib/tuner/finalists.cpp): on a loaded machine the
    # default run may have none, so only the warm start is certain here.
    assert on["warm_started"] == 1, on
    other = str(tmp_path / "other")
    os.mkdir(other)
    off, _ = tune(other, "warm_start=0, finalists=0", sizes=(65536, 32768))
    assert off["warm_started"] == 0 and off["finalists"] == 0, off


def test_effort_sizes_the_auto_search_and_a_named_search_refuses_it(fresh_cache):
    out, _ = tune(fresh_cache, "effort='quick'")
    assert out["measured"] == 4  # quick's 16 configs at least cover the space
    code = textwrap.dedent(f"""
        import kiln
        for kw in (dict(effort="fast"), dict(effort="full", search="exhaustive"),
                   dict(min_reps=5, max_reps=2), dict(cold_cache="yes"), dict(early_stop=0.5)):
            try:
                kiln.autotune(configs=[kiln.Config(B=1)], key=[], **kw)
                print("accepted", kw)
            except kiln.ConfigError as e:
                print("refused:", e)
        """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 5 and all(line.startswith("refused:") for line in lines), lines
    assert "effort='fast': give \"quick\", \"default\" or \"full\"" in lines[0]
    assert "search='exhaustive' bypasses" in lines[1]
    assert "min_reps=5 is above max_reps=2" in lines[2]


def test_kiln_effort_wins_over_the_declarations_search_and_budget(fresh_cache, tmp_path):
    declared = "search='exhaustive', max_configs=2"
    out, _ = tune(fresh_cache, declared)
    assert out["measured"] == 2
    other = str(tmp_path / "other")
    os.mkdir(other)
    out, _ = tune(other, declared, env={"KILN_EFFORT": "quick"})
    assert out["measured"] == 4, "the effort's plan covers the space"


def test_kiln_budget_s_wins_over_the_declarations_budget(fresh_cache, tmp_path):
    out, _ = tune(fresh_cache, "budget_s=1e-6, finalists=0")
    assert out["ok"] < 4, "the declared budget cuts the run short"
    other = str(tmp_path / "other")
    os.mkdir(other)
    out, _ = tune(other, "budget_s=1e-6, finalists=0", env={"KILN_BUDGET_S": "0"})
    assert out["ok"] == 4, "KILN_BUDGET_S=0: no budget"


def test_print_autotuning_and_the_autotune_log(fresh_cache, tmp_path):
    log = tmp_path / "tune.jsonl"
    env = {"KILN_PRINT_AUTOTUNING": "1", "KILN_AUTOTUNE_LOG": str(log), "KILN_SEARCH": "exhaustive"}
    out, err = tune(fresh_cache, env=env, sizes=(65536, 32768))
    decisions = [line for line in err.splitlines() if line.startswith("kiln autotuning saxpy_knobs")]
    assert len(decisions) == 2, err
    assert "4 configs measured; best config {BLOCK=" in decisions[0], decisions
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 8
    assert {line["kernel"] for line in lines} == {"saxpy_knobs"}
    assert len({line["run"] for line in lines}) == 2
    assert len({line["key"] for line in lines}) == 2
    assert sum(line["winner"] for line in lines) == 2
    assert all(line["status"] == "ok" and line["median_s"] > 0 for line in lines)


def test_a_bad_value_is_a_warning_naming_it_and_the_run_goes_on(fresh_cache):
    out, err = tune(fresh_cache, env={"KILN_EFFORT": "fast", "KILN_BUDGET_S": "-1",
                                      "KILN_SEARCH": "fastest"})
    assert out["ok"] == 4
    assert "KILN_EFFORT='fast' is not valid: use quick, default or full" in err, err
    assert "KILN_BUDGET_S='-1' is not valid" in err, err
    assert "KILN_SEARCH='fastest' is not a search strategy: use auto, exhaustive" in err, err
