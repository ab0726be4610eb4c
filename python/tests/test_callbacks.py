"""A user's Python callables misbehaving inside tuning: a tuned kernel
calling itself from its own hooks (it deadlocked), KeyboardInterrupt in a
hook (it was swallowed and the decision saved), a perf_model returning NaN
(it reached the ranking's sort), an int beyond 64 bits as a config value
(a bare std::bad_cast), a constraint naming a missing input (ignored), and
errors from callables cut before the exception's own text."""

import numpy as np
import pytest

import kiln
from conftest import SAXPY, run_python

# A child's kernel and call: 2 tiny configs, a key of n.
CHILD = f"""
import threading
import numpy as np, kiln
SAXPY = {SAXPY!r}
def make(name, grid=lambda m: (kiln.cdiv(m["n"], m["BLOCK"]),), **kw):
    k = kiln.Kernel(SAXPY, entry="saxpy<{{BLOCK}}>", backend="cpu", name=name,
                    signature=["a: f32", "x: f32*", "y: f32*", "n: i32"], grid=grid)
    return kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (64, 256)], key=["n"],
                         restore_value=["y"], **kw)(k)
x = np.ones(1000, np.float32)
"""


def saxpy_tuned(name, **kw):
    k = kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu", name=name,
                    signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                    grid=kw.pop("grid", lambda m: (kiln.cdiv(m["n"], m["BLOCK"]),)))
    configs = kw.pop("configs", [kiln.Config(BLOCK=b) for b in (64, 256)])
    return kiln.autotune(configs=configs, key=["n"], restore_value=["y"], **kw)(k)


# In a child with a time limit: before, these calls waited forever.
def test_a_kernel_called_from_its_own_early_config_prune_is_refused(fresh_cache):
    out = run_python(CHILD + """
def prune(configs, named):
    if named["n"] == 1000:
        tuned(1.0, x[:10].copy(), np.zeros(10, np.float32), 10)
    return configs
tuned = make("reentrant_prune", prune_configs_by={"early_config_prune": prune})
try:
    tuned(2.0, x, np.zeros_like(x), 1000)
except kiln.ConfigError as e:
    print("refused:", e)
""", fresh_cache, timeout=120)
    assert "refused: early_config_prune raised ConfigError: reentrant_prune was called from " \
           "inside its own tuning" in out, out
    assert "Call another kernel there" in out, out


def test_a_kernel_called_from_its_launch_rule_on_a_tuner_thread_is_refused(fresh_cache):
    # The launch rule runs on the tuner's benchmark threads, which do not
    # hold the tuning lock: the call must be refused there too.
    out = run_python(CHILD + """
threads = set()
def grid(m):
    threads.add(threading.get_ident())
    if m["n"] == 1000:
        tuned(1.0, x[:10].copy(), np.zeros(10, np.float32), 10)
    return (kiln.cdiv(m["n"], m["BLOCK"]),)
tuned = make("reentrant_grid", grid=grid)
try:
    tuned(2.0, x, np.zeros_like(x), 1000)
except kiln.KilnError as e:
    print("refused:", type(e).__name__, e)
print("tuner thread:", len(threads - {threading.main_thread().ident}) > 0)
""", fresh_cache, timeout=120)
    # Every config's launch rule made the refused call, the fallback's too:
    # no config can serve, and each one's reason is the refusal.
    assert "refused: NoValidConfigError" in out, out
    assert "tuner thread: True" in out, out
    assert "grid(meta) raised ConfigError: reentrant_grid was called from inside its own" in out, out


def test_other_threads_still_wait_for_a_tuning_run():
    tuned = saxpy_tuned("reentrant_threads")
    import threading
    x = np.ones(1000, np.float32)
    ys = [np.zeros_like(x) for _ in range(3)]
    errors = []

    def call(y):
        try:
            tuned(2.0, x, y, 1000)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=call, args=(y,)) for y in ys]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert all((y == 2).all() for y in ys)


@pytest.mark.parametrize("hook", ["reference", "grid"])
def test_keyboard_interrupt_in_a_hook_stops_tuning_and_saves_nothing(hook, fresh_cache):
    # The reference runs on the calling thread, the launch rule on the
    # tuner's threads (where it raises here); both stop the run.
    out = run_python(CHILD + f"""
HOOK = {hook!r}
def reference(a, x, y, n):
    raise KeyboardInterrupt
def grid(m):
    if threading.current_thread() is not threading.main_thread():
        raise KeyboardInterrupt
    return (kiln.cdiv(m["n"], m["BLOCK"]),)
kw = {{"reference": reference}} if HOOK == "reference" else {{"grid": grid}}
try:
    make("interrupted_" + HOOK, **kw)(2.0, x, np.zeros_like(x), 1000)
    print("no interrupt")
except KeyboardInterrupt:
    print("interrupted")
# A second object of the same kernel finds no decision in memory or on disk.
again = make("interrupted_" + HOOK)
again(2.0, x, np.zeros_like(x), 1000)
print("source", again.source((1000,)))
""", fresh_cache, timeout=120)
    assert "interrupted" in out.split() and "source tuned" in out, out


def test_system_exit_in_perf_model_leaves_the_call():
    def perf(**meta):
        raise SystemExit(3)

    tuned = saxpy_tuned("perf_model_exit", prune_configs_by={"perf_model": perf, "top_k": 1})
    x = np.ones(100, np.float32)
    with pytest.raises(SystemExit):
        tuned(2.0, x, np.zeros_like(x), 100)


def test_a_perf_model_returning_nan_is_refused():
    def perf(**meta):
        return float("nan") if meta["BLOCK"] == 64 else 1.0

    tuned = saxpy_tuned("perf_model_nan", prune_configs_by={"perf_model": perf, "top_k": 1})
    x = np.ones(100, np.float32)
    with pytest.raises(kiln.ConfigError,
                       match=r"perf_model returned nan for the config BLOCK=64: .* a finite number"):
        tuned(2.0, x, np.zeros_like(x), 100)


def test_an_int_beyond_64_bits_is_named():
    with pytest.raises(kiln.ConfigError, match=r"config parameter BLOCK is 1180591620717411303424, "
                                               r"outside the 64-bit range"):
        saxpy_tuned("bigint", configs=[kiln.Config(BLOCK=2**70)])
    with pytest.raises(kiln.ConfigError, match=r"a DynamicDim bucket is 1180591620717411303424"):
        kiln.choose_one("bigint_op", [Twice()], inputs(),
                        dynamic=[kiln.DynamicDim(input=0, dim=0, buckets=(2**70,))])


class Twice(kiln.Runner):
    def __init__(self, fail=None):
        self._fail = fail

    def get_valid_tactics(self, inputs, profile):
        return [0]

    def forward(self, inputs, tactic=-1, do_preparation=False):
        if self._fail and tactic >= 0:
            self._fail()
        x, out = inputs
        out[...] = 2 * x


def inputs():
    x = np.ones((4, 8), np.float32)
    return [x, np.zeros_like(x)]


def test_a_constraint_naming_a_missing_input_is_refused():
    with pytest.raises(kiln.ConfigError,
                       match=r"constraint 0 names input 9 dim 0, but the call has 2 inputs"):
        kiln.choose_one("missing_input_op", [Twice()], inputs(),
                        dynamic=[kiln.DynamicDim(input=0, dim=0, buckets=(4, 8))],
                        constraints=[(9, 0, lambda p: p[0])])
    with pytest.raises(kiln.ConfigError, match=r"constraint 0 names input 1 dim 5, but input 1 "
                                               r"has 2 dims"):
        kiln.choose_one("missing_dim_op", [Twice()], inputs(),
                        dynamic=[kiln.DynamicDim(input=0, dim=0, buckets=(4, 8))],
                        constraints=[(1, 5, lambda p: p[0])])


def deep(n, message):
    # A long traceback: the callers' frames came first in what was reported.
    if n:
        deep(n - 1, message)
    raise RuntimeError(message)


def test_a_hook_error_names_the_exception_and_where_it_was_raised():
    import threading

    def grid(meta):  # fails every config on the tuner's threads; the fallback launches
        if threading.current_thread() is not threading.main_thread():
            deep(10, "no grid today")
        return (kiln.cdiv(meta["n"], meta["BLOCK"]),)

    tuned = saxpy_tuned("grid_deep_raise", grid=grid)
    x = np.ones(100, np.float32)
    with pytest.raises(kiln.NoValidConfigError) as e:
        tuned(2.0, x, np.zeros_like(x), 100)
    # The message cuts each reason to 200 characters: the exception comes first.
    assert "grid(meta) raised RuntimeError: no grid today (at " in str(e.value), str(e.value)
    assert "test_callbacks.py:" in str(e.value), str(e.value)


def test_a_runner_error_names_the_exception_and_where_it_was_raised(capfd):
    def fail():
        deep(10, "rows must be 16-byte aligned")

    with kiln.tuning():
        kiln.choose_one("deep_raise_op", [Twice(fail)], inputs())
    err = capfd.readouterr().err
    assert "raised RuntimeError: rows must be 16-byte aligned (at " in err, err
