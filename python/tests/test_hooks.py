"""Triton's pre_hook / post_hook and do_bench= on kiln.autotune, and the
tuning keywords of kiln.Kernel (issue 57 §2), on the real CPU backend.
SAXPY accumulates (y = a x + y): a config's check against a reference of
a x passes only when something zeroes y before each run, as Triton users
do in pre_hook."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln
from conftest import SAXPY

BLOCKS = (256, 1024, 4096)


def saxpy_kernel(name, **tuning):
    return kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu", name=name,
                       signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                       grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),), **tuning)


def a_times_x(a, x, y, n):
    """The reference: y = a x, as one run from a zeroed y leaves it."""
    y[:] = a * x


def configs():
    return [kiln.Config(BLOCK=b) for b in BLOCKS]


def call(tuned, n=20000):
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    tuned(2.0, x, y, n)
    return x, y


def test_pre_hook_zeroes_the_accumulated_output_on_the_callers_array():
    seen = {"blocks": set(), "foreign": 0, "keys": set()}
    x = np.arange(20000, dtype=np.float32)
    y = np.ones(20000, dtype=np.float32)

    def zero_y(nargs):
        seen["blocks"].add(nargs["BLOCK"])
        seen["keys"].add(tuple(sorted(nargs)))
        seen["foreign"] += nargs["y"] is not y  # the caller's own array, not a copy
        nargs["y"][:] = 0

    tuned = kiln.autotune(configs=configs(), key=["n"], reference=a_times_x,
                          pre_hook=zero_y)(saxpy_kernel("saxpy_pre_hook"))
    tuned(2.0, x, y, x.size)
    assert all(m["status"] == "ok" for m in tuned.measurements()), tuned.measurements()
    assert seen["blocks"] == set(BLOCKS)
    assert seen["keys"] == {("BLOCK", "a", "n", "x", "y")}
    assert seen["foreign"] == 0
    # The real call runs no hook: it accumulates onto the caller's y.
    np.testing.assert_allclose(y, 2 * x + 1)


def test_without_pre_hook_the_accumulating_kernel_fails_its_check():
    tuned = kiln.autotune(configs=configs(), key=["n"],
                          reference=a_times_x)(saxpy_kernel("saxpy_no_pre_hook"))
    with pytest.raises(kiln.NoValidConfigError):
        call(tuned)


def test_post_hook_gets_nargs_and_no_exception_after_every_run():
    runs = []

    def after(nargs, exception):
        runs.append((nargs["BLOCK"], exception))

    tuned = kiln.autotune(configs=configs(), key=["n"], post_hook=after, restore_value=["y"],
                          min_reps=3, max_reps=3, warmup=1, early_stop=0,
                          finalists=0)(saxpy_kernel("saxpy_post_hook"))
    call(tuned)
    for b in BLOCKS:
        # The checked run and 3 timed repetitions.
        assert [e for blk, e in runs if blk == b] == [None] * 4, runs


def _fixed_times(times):
    """A pre_hook noting the config and a do_bench reporting its fixed time
    (Triton's do_bench sees only fn, so the hook says which config runs)."""
    current = {}
    ran = []

    def note(nargs):
        current["BLOCK"] = nargs["BLOCK"]

    def do_bench(fn):
        fn()
        ran.append(current["BLOCK"])
        return times[current["BLOCK"]]

    return note, do_bench, ran


@pytest.mark.parametrize("winner", [256, 4096])
def test_do_bench_decides_the_winner(winner):
    times = {b: (1.0 if b == winner else 3.0) for b in BLOCKS}
    note, do_bench, ran = _fixed_times(times)
    tuned = kiln.autotune(configs=configs(), key=["n"], restore_value=["y"], pre_hook=note,
                          do_bench=do_bench, finalists=0)(saxpy_kernel(f"saxpy_do_bench_{winner}"))
    call(tuned)
    assert tuned.best_config == kiln.Config(BLOCK=winner)
    assert set(ran) == set(BLOCKS)
    by_block = {m["config"]["BLOCK"]: m for m in tuned.measurements()}
    assert by_block[winner]["median"] == pytest.approx(1.0e-3)
    assert by_block[winner]["reps"] == 1


def test_a_do_bench_written_for_triton_gets_quantiles():
    got = []

    def do_bench(fn, quantiles):
        fn()
        got.append(quantiles)
        return [2.0, 1.0, 3.0]

    tuned = kiln.autotune(configs=configs(), key=["n"], restore_value=["y"], do_bench=do_bench,
                          finalists=0)(saxpy_kernel("saxpy_do_bench_quantiles"))
    call(tuned)
    assert got and all(q == (0.5, 0.2, 0.8) for q in got)
    m = tuned.measurements()[0]
    assert m["median"] == pytest.approx(2.0e-3) and m["min"] == pytest.approx(1.0e-3)


def test_a_raising_hook_fails_only_its_config():
    def pre(nargs):
        if nargs["BLOCK"] == 1024:
            raise ValueError("no 1024 today")

    tuned = kiln.autotune(configs=configs(), key=["n"], restore_value=["y"],
                          pre_hook=pre)(saxpy_kernel("saxpy_raising_hook"))
    x, y = call(tuned)
    np.testing.assert_allclose(y, 2 * x + 1)
    by_block = {m["config"]["BLOCK"]: m for m in tuned.measurements()}
    assert by_block[1024]["status"] != "ok"
    assert "pre_hook raised ValueError: no 1024 today" in by_block[1024]["reason"]
    assert all(by_block[b]["status"] == "ok" for b in (256, 4096))
    assert tuned.best_config != kiln.Config(BLOCK=1024)


def test_a_do_bench_returning_no_time_fails_its_config_naming_it():
    tuned = kiln.autotune(configs=configs(), key=["n"], restore_value=["y"],
                          do_bench=lambda fn: "fast")(saxpy_kernel("saxpy_bad_do_bench"))
    with pytest.raises(kiln.NoValidConfigError, match="do_bench returned 'fast'"):
        call(tuned)


def test_a_hook_calling_its_own_tuned_kernel_is_refused_not_a_deadlock():
    own = {}

    def pre(nargs):
        own["tuned"](2.0, nargs["x"], nargs["y"], nargs["n"])

    own["tuned"] = kiln.autotune(configs=configs(), key=["n"], restore_value=["y"],
                                 pre_hook=pre)(saxpy_kernel("saxpy_hook_reentry"))
    with pytest.raises(kiln.NoValidConfigError, match="called from inside its own tuning"):
        call(own["tuned"])


def test_keyboard_interrupt_in_a_hook_stops_the_run():
    def pre(nargs):
        raise KeyboardInterrupt

    tuned = kiln.autotune(configs=configs(), key=["n"], restore_value=["y"],
                          pre_hook=pre)(saxpy_kernel("saxpy_hook_interrupt"))
    with pytest.raises(KeyboardInterrupt):
        call(tuned)


def test_kernel_tuning_defaults_and_autotune_wins():
    kernel = saxpy_kernel("saxpy_kernel_defaults", search="exhaustive", max_configs=2,
                          min_reps=4, max_reps=4, early_stop=0, finalists=0)
    tuned = kiln.autotune(configs=configs(), key=["n"], restore_value=["y"])(kernel)
    call(tuned)
    ms = tuned.measurements()
    assert len(ms) == 2 and all(m["reps"] == 4 for m in ms), ms
    over = kiln.autotune(configs=configs(), key=["n"], restore_value=["y"], max_configs=3,
                         min_reps=2, max_reps=2)(kernel)
    call(over, n=30000)
    ms = over.measurements()
    assert len(ms) == 3 and all(m["reps"] == 2 for m in ms), ms


def test_kernel_hooks_are_defaults_too():
    blocks = set()
    kernel = saxpy_kernel("saxpy_kernel_hook", pre_hook=lambda nargs: blocks.add(nargs["BLOCK"]))
    tuned = kiln.autotune(configs=configs(), key=["n"], restore_value=["y"])(kernel)
    call(tuned)
    assert blocks == set(BLOCKS)


@pytest.mark.parametrize("kw, message", [
    (dict(effort="fast"), "effort='fast': give \"quick\", \"default\" or \"full\""),
    (dict(min_reps=5, max_reps=2), "min_reps=5 is above max_reps=2"),
    (dict(pre_hook=3), "pre_hook is a int: give a function f(nargs)"),
    (dict(do_bench="x"), "do_bench is a str: give a function f(fn) returning milliseconds"),
    (dict(serach="auto"), "kiln.Kernel got the unknown keyword(s) ['serach']"),
])
def test_kernel_checks_its_tuning_keywords_as_autotune_does(kw, message):
    with pytest.raises(kiln.ConfigError) as e:
        saxpy_kernel("saxpy_bad_kw", **kw)
    assert message in str(e.value)
    if "serach" not in kw:
        with pytest.raises(kiln.ConfigError) as a:
            kiln.autotune(configs=configs(), key=[], **kw)
        assert str(a.value) == str(e.value)


def test_the_environment_wins_over_the_kernels_defaults(fresh_cache):
    code = textwrap.dedent(f"""
        import numpy as np, kiln
        k = kiln.Kernel({SAXPY!r}, entry="saxpy<{{BLOCK}}>", backend="cpu", name="saxpy_env",
                        signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                        grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),),
                        search="exhaustive", max_configs=2)
        t = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (256, 1024, 4096)], key=[],
                          restore_value=["y"])(k)
        x = np.ones(5000, dtype=np.float32); y = np.zeros(5000, dtype=np.float32)
        t(2.0, x, y, 5000)
        print(len(t.measurements()))
        """)
    counts = []
    for effort in (None, "quick"):
        env = {k: v for k, v in os.environ.items()
               if k not in ("KILN_SEARCH", "KILN_EFFORT", "KILN_BUDGET_S")}
        env["KILN_CACHE_DIR"] = os.path.join(fresh_cache, effort or "declared")
        if effort:
            env["KILN_EFFORT"] = effort
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        counts.append(int(r.stdout.split()[-1]))
    assert counts == [2, 3], "KILN_EFFORT's plan covers the space the kernel's max_configs cut"
