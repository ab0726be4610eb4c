"""A bad kiln.compile / kiln.Kernel / kiln.autotune declaration is a
kiln.ConfigError naming the value and the fix, raised at once: never a bare
std::bad_cast, nanobind's list of overloads, or (rep=nan) an abort."""

import math

import numpy as np
import pytest

import kiln
from conftest import SAXPY

SIG = ["a: f32", "x: f32*", "y: f32*", "n: i32"]


def kernel(name, **kw):
    args = dict(entry="saxpy<{BLOCK}>", backend="cpu", signature=SIG, name=name,
                grid=lambda m: (kiln.cdiv(m["n"], m["BLOCK"]),))
    args.update(kw)
    return kiln.Kernel(SAXPY, **args)


@pytest.mark.parametrize("option, value, message", [
    ("rep", math.nan, "rep=nan: give a finite number"),
    ("warmup", "3", "warmup='3' is a str: give an int"),
    ("warmup", 2**40, "at most"),
    ("max_configs", -1, "max_configs=-1: it must be at least 0"),
    ("deadline_s", 0, "deadline_s=0: it must be greater than 0"),
    ("rtol", "x", "rtol='x' is a str"),
    ("reset_to_zero", "y", "reset_to_zero='y' is a string"),
])
def test_autotune_options_are_checked(option, value, message):
    with pytest.raises(kiln.ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        kiln.autotune(configs=[kiln.Config(BLOCK=256)], key=["n"], **{option: value})


# key=None was list(None): a bare TypeError.
@pytest.mark.parametrize("key", [None, 3, ["n", 1]])
def test_autotune_key_must_be_names(key):
    with pytest.raises(kiln.ConfigError, match=r"key=.*: give a list of argument names"):
        kiln.autotune(configs=[kiln.Config(BLOCK=256)], key=key)


@pytest.mark.parametrize("field, value, message", [
    ("entry", None, "entry is None"),
    ("headers", {"a.h": 1}, r"headers\['a.h'\]"),
    ("signature", ["a: f32", "x"], "signature entry 'x' has no type"),
    ("signature", None, "needs signature="),
])
def test_kernel_fields_are_checked(field, value, message):
    with pytest.raises(kiln.ConfigError, match=message):
        kernel("bad_field", **{field: value})


def test_compile_signature_as_one_string_is_named():
    with pytest.raises(kiln.ConfigError, match="give a list"):
        kiln.compile(SAXPY, "saxpy<4>", backend="cpu", signature="a: f32")


def test_hooks_results_are_read_as_python_reads_them():
    # A constraint's result is truthy or not (1, np.bool_); a perf_model's
    # non-number and an early prune's non-list are named.
    x = np.ones(1000, np.float32)
    y = np.zeros_like(x)
    t = kiln.autotune(space={"BLOCK": [128, 256]}, constraints=[lambda c: np.bool_(c["BLOCK"] == 256)],
                      key=["n"], check=False)(kernel("truthy_constraint"))
    t(1.0, x, y, x.size)
    assert t.best_config == kiln.Config(BLOCK=256)
    bad_model = kiln.autotune(space={"BLOCK": [128, 256]}, key=["n"],
                              prune_configs_by={"perf_model": lambda **m: "fast", "top_k": 1})(
        kernel("bad_perf_model"))
    with pytest.raises(kiln.ConfigError, match="perf_model returned 'fast'"):
        bad_model(1.0, x, y, x.size)
    bad_prune = kiln.autotune(space={"BLOCK": [128, 256]}, key=["n"],
                              prune_configs_by={"early_config_prune": lambda c, a: None})(
        kernel("bad_early_prune"))
    with pytest.raises(kiln.ConfigError, match="early_config_prune returned None"):
        bad_prune(1.0, x, y, x.size)
