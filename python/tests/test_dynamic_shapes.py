"""Dynamic shapes in @kiln.autotune: bucketed key entries tune once per
bucket and serve every size in it; what no rule names stays exact; with
tuning off (KILN_TUNING=0) a key with no record is served the nearest
tuned key's winner when it is valid for the call, else the default."""

import numpy as np
import pytest

import kiln
from conftest import SAXPY, run_python

POW2 = kiln.power_of_two_buckets(1, 4096)


def saxpy(name):
    # A source of its own: its artifacts never count as another test's hits.
    return kiln.Kernel(SAXPY + "// dynamic shapes\n", entry="saxpy<{BLOCK}>", backend="cpu", name=name,
                       signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                       grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),))


def tuned_saxpy(name, key):
    return kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (64, 256)], key=key,
                         restore_value=["y"], max_configs=2)(saxpy(name))


def call(t, n):
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    t(2.0, x, y, n)
    np.testing.assert_allclose(y, 2 * x + 1)  # the call's own shape, whatever was tuned


def test_two_hundred_lengths_tune_at_most_once_per_power_of_two():
    t = tuned_saxpy("dyn_200", {"n": POW2, "x": {0: POW2}, "y": {0: POW2}})
    lengths = sorted({1 + (i * 2654435761) % 4096 for i in range(400)})[:200]
    assert len(lengths) == 200
    for n in lengths:
        call(t, n)
    s = t.stats()
    assert 2 <= s["misses"] <= 13, s
    assert s["hits"] == 200 - s["misses"], s


def test_sizes_of_one_bucket_share_one_record():
    t = tuned_saxpy("dyn_share", {"n": POW2, "x": {0: POW2}, "y": {0: POW2}})
    call(t, 100)
    call(t, 120)
    assert t.stats()["misses"] == 1
    # The key holds the representative (x, y, n in signature order).
    assert t.source(((128,), (128,), 128)) == "tuned"
    call(t, 129)
    assert t.stats()["misses"] == 2


def test_extents_no_rule_names_stay_exact():
    t = tuned_saxpy("dyn_exact", {"n": POW2})
    call(t, 100)
    call(t, 120)
    assert t.stats()["misses"] == 2  # x and y keep their exact extents


def test_a_function_rule():
    t = tuned_saxpy("dyn_fn", {"n": lambda s: 1000 * kiln.cdiv(s, 1000),
                               "x": {0: lambda s: 1000 * kiln.cdiv(s, 1000)},
                               "y": {0: lambda s: 1000 * kiln.cdiv(s, 1000)}})
    for n in (1, 500, 999, 1000):
        call(t, n)
    call(t, 1001)
    assert t.stats()["misses"] == 2
    assert t.source(((2000,), (2000,), 2000)) == "tuned"


@pytest.mark.parametrize("key, words", [
    ({"n": []}, "give buckets"),
    ({"n": [0, 4]}, "sizes of 1 or more"),
    ({"x": {-1: POW2}}, "dims are ints from 0"),
])
def test_bad_rules_are_named_in_python(key, words):
    with pytest.raises(kiln.ConfigError, match=words):
        tuned_saxpy("dyn_bad", key)


@pytest.mark.parametrize("key, words", [
    ({"a": POW2}, "declares it f32;"),
    ({"x": POW2}, "a tensor's dims"),
    ({"n": {0: POW2}}, "bucket an integer scalar"),
    ({"nope": POW2}, "nope"),
])
def test_bad_rules_are_named_by_the_signature(key, words):
    with pytest.raises(kiln.ConfigError, match=words):
        tuned_saxpy("dyn_bad_sig", key)


NAP = r"""
#include "kiln/cpu_kernel.h"
extern "C" int usleep(unsigned int);
template <int W>
void twice(const kiln::cpu::BlockContext&, const float* x, float* y, int n) {
  if (W == 1) usleep(3000);
  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];
}
"""

# W = 1 (the default) naps 3 ms: W = 2 wins. PRUNE keeps W = 2 only up to
# n = 512 when set.
CHILD = """
    import os, sys
    os.environ["KILN_TUNING"] = "%(tuning)s"
    import numpy as np, kiln
    k = kiln.Kernel(%(src)r, entry="twice<{W}>", backend="cpu", name="dyn_nap",
                    signature=["x: const f32*", "y: f32*", "n: i32"], grid=lambda meta: (1,))
    prune = None
    if %(prune)s:
        prune = {"early_config_prune": lambda cs, a: [c for c in cs
                 if c.kwargs["W"] == 1 or a["n"] <= 512]}
    t = kiln.autotune(configs=[kiln.Config(W=1), kiln.Config(W=2)], key={"n": None},
                      prune_configs_by=prune)(k)
    n = %(n)d
    x = np.ones(n, dtype=np.float32); y = np.zeros(n, dtype=np.float32)
    t(x, y, n)
    assert float(y[-1]) == 2.0
    s = t.stats()
    print("source=" + t.source((n,)), "W=%%d" %% t.best_config.kwargs["W"],
          "nearest=%%d default=%%d" %% (s["served_nearest"], s["served_default"]))
"""


def child(cache, *, tuning, n, prune=False):
    return run_python(CHILD % {"tuning": tuning, "src": NAP, "n": n, "prune": prune}, cache)


def test_tuning_off_serves_the_nearest_tuned_key(fresh_cache):
    assert "source=tuned W=2" in child(fresh_cache, tuning=1, n=64)
    out = child(fresh_cache, tuning=0, n=1000)
    assert "source=nearest: dyn_nap|" in out and "#n=int:64" in out, out
    assert "W=2 nearest=1 default=0" in out, out


def test_tuning_off_serves_the_default_when_the_nearest_is_invalid(fresh_cache):
    assert "W=2" in child(fresh_cache, tuning=1, n=64, prune=True)
    out = child(fresh_cache, tuning=0, n=1000, prune=True)
    assert "source=default W=1 nearest=0 default=1" in out, out
