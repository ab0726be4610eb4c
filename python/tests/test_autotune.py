"""@kiln.autotune for a Triton user: tuning, keys, warm starts across
processes, pruning, restore/reset, checking and errors."""

import numpy as np
import pytest

import kiln
from conftest import SAXPY, run_python


def saxpy_kernel(source=SAXPY, name="saxpy"):
    return kiln.Kernel(source, entry="saxpy<{BLOCK}>", backend="cpu", name=name,
                       signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                       grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),))


def test_tunes_on_first_call_then_serves_from_memory():
    tuned = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (256, 1024, 4096)],
                          key=["n"], restore_value=["y"])(saxpy_kernel(name="saxpy_mem"))
    x = np.arange(10000, dtype=np.float32)
    y = np.ones(10000, dtype=np.float32)
    tuned(2.0, x, y, x.size)
    np.testing.assert_allclose(y, 2 * x + 1)  # one clean run, whatever tuning did
    assert tuned.best_config in [kiln.Config(BLOCK=b) for b in (256, 1024, 4096)]
    s = tuned.stats()
    assert s["misses"] == 1 and s["benchmarked"] == 3, s
    assert tuned.source((10000,)) == "tuned"
    for _ in range(5):
        tuned(2.0, x, y, x.size)
    s = tuned.stats()
    assert s["misses"] == 1 and s["hits"] >= 5 and s["compiled"] == 3, s
    ms = tuned.measurements((10000,))
    assert len(ms) == 3 and all(m["status"] == "ok" and m["median"] > 0 for m in ms)


def test_a_new_key_tunes_again():
    tuned = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (256, 1024)],
                          key=["n"], restore_value=["y"])(saxpy_kernel(name="saxpy_keys"))
    for n in (1000, 3000):
        x = np.ones(n, dtype=np.float32)
        y = np.zeros(n, dtype=np.float32)
        tuned(1.5, x, y, n)
        np.testing.assert_allclose(y, 1.5)
    assert tuned.stats()["misses"] == 2
    assert set(tuned._measurements()) == {(1000,), (3000,)}


def test_warm_start_in_a_new_process_and_retune_on_edit(fresh_cache):
    code = """
        import numpy as np, kiln
        src = %r
        k = kiln.Kernel(src, entry="saxpy<{BLOCK}>", backend="cpu",
                        signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                        grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),))
        t = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (512, 2048)], key=["n"],
                          restore_value=["y"])(k)
        x = np.ones(5000, dtype=np.float32); y = np.zeros(5000, dtype=np.float32)
        t(3.0, x, y, 5000)
        assert float(y[-1]) == 3.0
        s = t.stats()
        print("source", t.source((5000,)), "compiled", s["compiled"], "best", t.best_config)
    """
    cold = run_python(code % SAXPY, fresh_cache)
    warm = run_python(code % SAXPY, fresh_cache)
    assert "source tuned compiled 2" in cold, cold
    assert "source disk compiled 0" in warm, warm
    assert cold.split("best")[1] == warm.split("best")[1]
    edited = run_python(code % (SAXPY + "\n// edited\n"), fresh_cache)
    assert "source tuned" in edited, edited


def test_space_with_constraints_and_default():
    src = r"""
#include "kiln/cpu_kernel.h"
template <int BLOCK, int UNROLL>
void fill(const kiln::cpu::BlockContext& ctx, float* y, float v, int n) {
  const int begin = (int)ctx.block_idx.x * BLOCK;
  for (int i = begin; i < begin + BLOCK && i < n; i += UNROLL)
    for (int u = 0; u < UNROLL && i + u < n; ++u) y[i + u] = v;
}
"""
    k = kiln.Kernel(src, entry="fill<{BLOCK},{UNROLL}>", backend="cpu", name="fill_space",
                    signature=["y: f32*", "v: f32", "n: i32"],
                    grid=lambda m: (kiln.cdiv(m["n"], m["BLOCK"]),))
    tuned = kiln.autotune(space={"BLOCK": [128, 512, 2048], "UNROLL": [1, 4]},
                          constraints=[lambda c: c["BLOCK"] >= 128 * c["UNROLL"]],
                          default={"BLOCK": 512, "UNROLL": 1}, key=["n"])(k)
    y = np.zeros(4096, dtype=np.float32)
    tuned(y, 7.0, 4096)
    assert (y == 7.0).all()
    configs = {m["config"] for m in tuned.measurements()}
    assert kiln.Config(BLOCK=128, UNROLL=4) not in configs  # the constraint removed it
    assert len(configs) == 5


def test_prune_configs_by_perf_model_and_early_prune():
    seen = {}

    def perf_model(**meta):
        seen.setdefault("meta", meta)
        return 1.0 / meta["BLOCK"]  # "bigger blocks are faster"

    def early(configs, named_args):
        seen["n"] = named_args["n"]
        return [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"]]

    tuned = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (64, 256, 1024, 4096, 16384)],
                          key=["n"], restore_value=["y"],
                          prune_configs_by={"perf_model": perf_model, "top_k": 2,
                                            "early_config_prune": early})(saxpy_kernel(name="saxpy_prune"))
    x = np.ones(2000, dtype=np.float32)
    y = np.zeros(2000, dtype=np.float32)
    tuned(1.0, x, y, 2000)
    assert seen["n"] == 2000 and "x" in seen["meta"] and "BLOCK" in seen["meta"]
    ran = {m["config"]["BLOCK"] for m in tuned.measurements() if m["status"] == "ok"}
    # 4096 and 16384 pruned early; of the rest the model keeps 1024 and 256,
    # plus the default (the first config) that every run measures.
    assert ran <= {64, 256, 1024} and {256, 1024} <= ran, tuned.measurements()


def test_reset_to_zero():
    src = r"""
#include "kiln/cpu_kernel.h"
template <int BLOCK>
void total(const kiln::cpu::BlockContext& ctx, const float* x, float* out, int n) {
  if (ctx.block_idx.x != 0) return;
  for (int i = 0; i < n; ++i) out[0] += x[i];  // accumulates: needs a zeroed out
}
"""
    k = kiln.Kernel(src, entry="total<{BLOCK}>", backend="cpu", name="total_reset",
                    signature=["x: f32*", "out: f32*", "n: i32"], grid=(1,))
    tuned = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (1, 2, 3)], key=["n"],
                          reset_to_zero=["out"])(k)
    x = np.ones(100, dtype=np.float32)
    out = np.full(1, 55.0, dtype=np.float32)
    tuned(x, out, 100)
    assert out[0] == 100.0  # zeroed before the real call; tuning's runs left no trace
    tuned(x, out, 100)
    assert out[0] == 100.0


def test_check_rejects_a_wrong_config_and_reference():
    src = r"""
#include "kiln/cpu_kernel.h"
template <int BAD>
void twice(const kiln::cpu::BlockContext&, const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = 2 * x[i] + (BAD ? 1.0f : 0.0f);
}
"""
    k = kiln.Kernel(src, entry="twice<{BAD}>", backend="cpu", name="twice_check",
                    signature=["x: f32*", "y: f32*", "n: i32"], grid=(1,))

    def reference(x, y, n):
        y[:n] = 2 * x[:n]

    tuned = kiln.autotune(configs=[kiln.Config(BAD=1), kiln.Config(BAD=0)], key=["n"],
                          reference=reference)(k)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, dtype=np.float32)
    tuned(x, y, 64)
    assert tuned.best_config == kiln.Config(BAD=0)
    status = {m["config"]["BAD"]: m["status"] for m in tuned.measurements()}
    assert status[1] == "wrong_result", tuned.measurements()
    np.testing.assert_array_equal(y, 2 * x)


def test_no_valid_config_lists_every_failure():
    src = r"""
#include "kiln/cpu_kernel.h"
template <int N>
void nope(const kiln::cpu::BlockContext&, float* y) { static_assert(N < 0, "never"); }
"""
    k = kiln.Kernel(src, entry="nope<{N}>", backend="cpu", name="nope_all",
                    signature=["y: f32*"], grid=(1,))
    tuned = kiln.autotune(configs=[kiln.Config(N=1), kiln.Config(N=2)], key=[])(k)
    with pytest.raises(kiln.NoValidConfigError) as e:
        tuned(np.zeros(1, dtype=np.float32))
    assert len(e.value.failures) == 2
    assert "N=1" in str(e.value) and "N=2" in str(e.value)
    assert all("compile" in reason for _, reason in e.value.failures)


def test_crashing_and_hanging_configs_do_not_take_the_process_down():
    src = r"""
#include "kiln/cpu_kernel.h"
template <int MODE>
void risky(const kiln::cpu::BlockContext&, float* y, int n) {
  if (MODE == 1) { volatile int* p = nullptr; *p = 1; }  // segfaults
  if (MODE == 2) { volatile int spin = 1; while (spin) {} }  // hangs
  for (int i = 0; i < n; ++i) y[i] = 5.0f;
}
"""
    k = kiln.Kernel(src, entry="risky<{MODE}>", backend="cpu", name="risky_modes",
                    signature=["y: f32*", "n: i32"], grid=(1,))
    tuned = kiln.autotune(configs=[kiln.Config(MODE=m) for m in (0, 1, 2)], key=["n"],
                          deadline_s=2.0)(k)
    y = np.zeros(32, dtype=np.float32)
    tuned(y, 32)
    assert tuned.best_config == kiln.Config(MODE=0)
    assert (y == 5.0).all()
    status = {m["config"]["MODE"]: m["status"] for m in tuned.measurements()}
    assert status[1] == "crashed" and status[2] == "timeout", status


def test_bad_declarations_name_the_problem():
    k = saxpy_kernel(name="saxpy_bad")
    with pytest.raises(kiln.ConfigError, match="'m'.*not a parameter"):
        kiln.autotune(configs=[kiln.Config(BLOCK=1)], key=["m"])(k)
    with pytest.raises(kiln.ConfigError, match="restore_value"):
        kiln.autotune(configs=[kiln.Config(BLOCK=1)], key=["n"], restore_value=["z"])(k)
    with pytest.raises(kiln.ConfigError, match="configs= or space=|configs=\\[kiln.Config"):
        kiln.autotune(key=["n"])(k)
    with pytest.raises(kiln.ConfigError, match="BLK"):
        bad = kiln.Kernel(SAXPY, entry="saxpy<{BLK}>", backend="cpu", name="saxpy_typo",
                          signature=["a: f32", "x: f32*", "y: f32*", "n: i32"], grid=(1,))
        kiln.autotune(configs=[kiln.Config(BLOCK=1)], key=["n"])(bad)
    with pytest.raises(kiln.ConfigError, match="unknown type"):
        kiln.autotune(configs=[kiln.Config(BLOCK=1)], key=[])(
            kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu", signature=["a: float32x"], grid=(1,)))


# Second: a config the tuning reaches. First: the space's default, whose grid
# the empty-grid check evaluates before tuning; its failure is that config's,
# recorded by the tuning, not the call's.
@pytest.mark.parametrize("order", [(64, 3), (3, 64)], ids=["second", "first"])
def test_a_raising_grid_fails_that_config_only(order):
    def grid(meta):
        if meta["BLOCK"] == 3:
            raise ValueError("no grid for 3")
        return (kiln.cdiv(meta["n"], meta["BLOCK"]),)

    k = kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu",
                    name="saxpy_grid_raise_%d" % order[0],
                    signature=["a: f32", "x: f32*", "y: f32*", "n: i32"], grid=grid)
    tuned = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in order], key=["n"],
                          restore_value=["y"])(k)
    x = np.ones(100, dtype=np.float32)
    y = np.zeros(100, dtype=np.float32)
    tuned(1.0, x, y, 100)
    assert tuned.best_config == kiln.Config(BLOCK=64)
    failed = [m for m in tuned.measurements() if m["status"] != "ok"]
    assert failed and "no grid for 3" in failed[0]["reason"]


# Every config's grid raises, the default's too: no config can serve the
# call, which is NoValidConfigError listing each one (before, the fallback's
# launch rule raised out of the tuner as a bare ConfigError).
def test_a_grid_that_raises_for_every_config_is_no_valid_config():
    def grid(meta):
        raise ValueError("no grid at all")

    k = kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu", name="saxpy_grid_raise_all",
                    signature=["a: f32", "x: f32*", "y: f32*", "n: i32"], grid=grid)
    tuned = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (32, 64)], key=["n"])(k)
    x = np.ones(100, dtype=np.float32)
    with pytest.raises(kiln.NoValidConfigError) as e:
        tuned(1.0, x, np.zeros_like(x), 100)
    assert len(e.value.failures) == 2, e.value.failures
    assert all("no grid at all" in reason for _, reason in e.value.failures), e.value.failures


def test_kernel_called_with_a_config_directly():
    k = saxpy_kernel(name="saxpy_direct")
    x = np.ones(300, dtype=np.float32)
    y = np.zeros(300, dtype=np.float32)
    k(2.0, x, y, 300, BLOCK=128)
    assert (y == 2.0).all()


def test_a_config_run_directly_is_compiled_not_tuned(fresh_cache):
    # The config's artifact is compiled (and stored) and run; nothing is
    # benchmarked or saved as a tuning decision, and a second process loads
    # the artifact the first stored.
    code = """
        import pathlib, numpy as np, kiln
        k = kiln.Kernel(saxpy_source, entry="saxpy<{BLOCK}>", backend="cpu", name="saxpy_fixed",
                        signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                        grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),))
        x = np.ones(300, dtype=np.float32)
        y = np.zeros(300, dtype=np.float32)
        k(2.0, x, y, 300, BLOCK=128)
        k(2.0, x, y, 300, BLOCK=128)
        assert (y == 4.0).all(), y
        print(sorted(p.name for p in pathlib.Path(kiln_cache).rglob("*.json")
                     if p.parent.name == "tuning"))
        print(sum(1 for p in (pathlib.Path(kiln_cache) / "artifacts").rglob("*") if p.is_file()))
    """.replace("kiln_cache", repr(fresh_cache)).replace("saxpy_source", repr(SAXPY))
    first = run_python(code, fresh_cache).split("\n")
    assert first[0] == "[]", first  # no tuning record written
    assert int(first[1]) > 0, first  # the artifact is stored
    second = run_python(code, fresh_cache).split("\n")
    assert second[:2] == first[:2], (first, second)  # loaded: nothing new stored


def test_a_config_run_directly_reports_its_compile_error():
    k = saxpy_kernel(source=SAXPY.replace("y[i] = a", "y[i] = undefined_name"),
                     name="saxpy_fixed_broken")
    x = np.ones(8, dtype=np.float32)
    with pytest.raises(kiln.CompileError) as e:
        k(2.0, x, np.zeros_like(x), 8, BLOCK=4)
    assert "undefined_name" in str(e.value), e.value


def test_trace_is_written(tmp_path):
    tuned = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (128, 512)], key=["n"],
                          restore_value=["y"])(saxpy_kernel(name="saxpy_trace"))
    path = tmp_path / "trace.json"
    tuned.trace(str(path))
    x = np.ones(700, dtype=np.float32)
    y = np.zeros(700, dtype=np.float32)
    tuned(1.0, x, y, 700)
    assert path.exists() and "traceEvents" in path.read_text()


def test_raw_pointer_with_its_extent_is_isolated_like_a_tensor():
    src = r"""
#include "kiln/cpu_kernel.h"
template <int MODE>
void with_ws(const kiln::cpu::BlockContext&, void* ws, float* y, int n) {
  float* w = (float*)ws;
  for (int i = 0; i < n; ++i) w[i] = 1.0f;           // scribbles on the workspace
  if (MODE == 1) { volatile int* p = nullptr; *p = 1; }
  for (int i = 0; i < n; ++i) y[i] = w[i] * 3.0f;
}
"""
    k = kiln.Kernel(src, entry="with_ws<{MODE}>", backend="cpu", name="with_ws_ptr",
                    signature=["ws: void*", "y: f32*", "n: i32"], grid=(1,))
    tuned = kiln.autotune(configs=[kiln.Config(MODE=0), kiln.Config(MODE=1)], key=["n"])(k)
    ws = np.zeros(64, dtype=np.float32)
    y = np.zeros(64, dtype=np.float32)
    tuned((ws.ctypes.data, ws.nbytes), y, 64)  # (address, bytes): copied to each worker
    assert tuned.best_config == kiln.Config(MODE=0)
    assert (y == 3.0).all() and (ws == 1.0).all()  # one clean run's effect
    status = {m["config"]["MODE"]: m["status"] for m in tuned.measurements()}
    assert status[1] == "crashed"
    # An address without its extent cannot be copied to a worker: refused,
    # naming the argument, never a silent fallback to threads.
    other = kiln.autotune(configs=[kiln.Config(MODE=0)], key=["n"])(
        kiln.Kernel(src, entry="with_ws<{MODE}>", backend="cpu", name="with_ws_bare",
                    signature=["ws: void*", "y: f32*", "n: i32"], grid=(1,)))
    with pytest.raises(kiln.KilnError, match="ws"):
        other(ws.ctypes.data, y, 64)


def test_an_empty_call_runs_nothing_and_is_not_tuned():
    # n = 0 gives grid (0,) for every config, as in Triton a no-op; tuning it
    # would time empty launches and keep whichever came first.
    configs = [kiln.Config(BLOCK=b) for b in (256, 1024)]
    tuned = kiln.autotune(configs=configs, key=["n"], restore_value=["y"])(
        saxpy_kernel(name="saxpy_empty"))
    x = np.zeros(0, dtype=np.float32)
    y = np.zeros(0, dtype=np.float32)
    tuned(2.0, x, y, 0)
    tuned(2.0, x, y, 0)
    s = tuned.stats()
    assert s["misses"] == 0 and s["benchmarked"] == 0 and s["compiled"] == 0, s
    x = np.ones(3000, dtype=np.float32)
    y = np.zeros(3000, dtype=np.float32)
    tuned(2.0, x, y, 3000)
    np.testing.assert_allclose(y, 2.0)
    assert tuned.stats()["misses"] == 1


def test_a_config_whose_grid_is_empty_fails_instead_of_winning():
    # BLOCK=0 would give no blocks where the others give some: it must not
    # be timed as the fastest.
    configs = [kiln.Config(BLOCK=b) for b in (256, 1024, 8192)]
    kernel = kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu", name="saxpy_half_empty",
                         signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                         grid=lambda meta: (0 if meta["BLOCK"] == 8192 else
                                            kiln.cdiv(meta["n"], meta["BLOCK"]),))
    tuned = kiln.autotune(configs=configs, key=["n"], restore_value=["y"])(kernel)
    x = np.ones(5000, dtype=np.float32)
    y = np.zeros(5000, dtype=np.float32)
    tuned(2.0, x, y, 5000)
    np.testing.assert_allclose(y, 2.0)
    assert tuned.best_config != kiln.Config(BLOCK=8192)
    failed = [m for m in tuned.measurements((5000,)) if m["status"] != "ok"]
    assert len(failed) == 1 and "no blocks" in failed[0]["reason"], failed

