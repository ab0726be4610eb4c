"""The tuning keywords that ``kiln.Kernel`` (as the kernel's defaults) and
``kiln.autotune`` (which wins over them) both take, checked in one place:
the search and its budget, the measurement, and Triton's benchmark hooks
(pre_hook, post_hook, do_bench). The environment (KILN_SEARCH, KILN_EFFORT,
KILN_BUDGET_S) wins over both; the native tuner applies it."""

from __future__ import annotations

import math
import numbers

from .errors import ConfigError

# Each tuning keyword and its value when neither the kernel nor autotune
# gives it (None: the C++ default).
TUNING_DEFAULTS = {
    "search": "auto", "max_configs": None, "budget_s": None, "warmup": None, "rep": None,
    "deadline_s": None, "effort": None, "warm_start": None, "finalists": None,
    "cold_cache": False, "cuda_graph": False, "min_reps": None, "max_reps": None,
    "early_stop": None, "delay_us": None, "compile_deadline_s": None,
    "pre_hook": None, "post_hook": None, "do_bench": None,
}


def checked_tuning(given: dict, who: str = "kiln.autotune") -> dict:
    """The tuning keywords given (None: not given), each checked before the
    native side reads it; returns those given."""
    unknown = set(given) - set(TUNING_DEFAULTS)
    if unknown:
        raise ConfigError(f"{who} got the unknown keyword(s) {sorted(unknown)}: its tuning "
                          f"keywords are {', '.join(TUNING_DEFAULTS)}", code="invalid_argument")
    t = {k: v for k, v in given.items() if v is not None}
    search = t.get("search")
    if search is not None and not isinstance(search, str):
        raise ConfigError(f"search={search!r}: give a strategy name such as \"auto\"",
                          code="invalid_argument")
    effort = t.get("effort")
    if effort is not None and effort not in ("quick", "default", "full"):
        raise ConfigError(f"effort={effort!r}: give \"quick\", \"default\" or \"full\"",
                          code="invalid_argument")
    if effort is not None and search not in (None, "auto"):
        raise ConfigError(f"effort={effort!r} sizes the auto search, which search={search!r} "
                          "bypasses: drop effort, or size it with max_configs",
                          code="invalid_argument")
    _check_counts(t)
    _check_number("rep", t.get("rep"), minimum=0)
    _check_number("budget_s", t.get("budget_s"), minimum=0)
    _check_number("deadline_s", t.get("deadline_s"), minimum=0, positive=True)
    _check_number("early_stop", t.get("early_stop"), minimum=0)
    if t.get("early_stop") is not None and 0 < t["early_stop"] < 1:
        raise ConfigError(f"early_stop={t['early_stop']!r} would stop configs faster than "
                          "the best: give 0 (off) or a factor of 1 or more", code="invalid_argument")
    _check_number("delay_us", t.get("delay_us"), minimum=0)
    _check_number("compile_deadline_s", t.get("compile_deadline_s"), minimum=0, positive=True)
    for name in ("cold_cache", "cuda_graph"):
        if name in t and not isinstance(t[name], bool):
            raise ConfigError(f"{name}={t[name]!r}: give True or False", code="invalid_argument")
    for name, want in (("pre_hook", "f(nargs)"), ("post_hook", "f(nargs, exception)"),
                       ("do_bench", "f(fn) returning milliseconds")):
        if name in t and not callable(t[name]):
            raise ConfigError(f"{name} is a {type(t[name]).__name__}: give a function {want}",
                              code="invalid_argument")
    return t


def _check_counts(t: dict) -> None:
    """The integer keywords, and min_reps against max_reps."""
    _check_number("max_configs", t.get("max_configs"), integer=True, minimum=0)
    for name in ("warmup", "warm_start", "finalists"):
        _check_number(name, t.get(name), integer=True, minimum=0, maximum=1_000_000)
    for name in ("min_reps", "max_reps"):
        _check_number(name, t.get(name), integer=True, minimum=1, maximum=1_000_000)
    if t.get("min_reps") is not None and t.get("max_reps") is not None \
            and t["min_reps"] > t["max_reps"]:
        raise ConfigError(f"min_reps={t['min_reps']} is above max_reps={t['max_reps']}",
                          code="invalid_argument")


def merged_tuning(kernel_defaults: dict, given: dict) -> dict:
    """Every tuning keyword: autotune's own (``given``) over the kernel's
    defaults over TUNING_DEFAULTS, the whole checked again (an effort from
    one and a search from the other may not go together)."""
    merged = {**kernel_defaults, **{k: v for k, v in given.items() if v is not None}}
    checked_tuning(merged)
    out = {**TUNING_DEFAULTS, **merged}
    if out["do_bench"] is not None:
        out["do_bench"] = _in_milliseconds(out["do_bench"])
    return out


def _in_milliseconds(do_bench):
    """``do_bench`` as the native side calls it: fn -> a list of
    milliseconds. A benchmarker that takes ``quantiles`` (Triton's own, or
    one written for Triton's autotuner) is called as Triton calls it, with
    quantiles=(0.5, 0.2, 0.8); its three times are then the samples (their
    median is the median)."""
    import inspect  # here: `import kiln` stays light

    try:
        params = inspect.signature(do_bench).parameters
        quantiles = "quantiles" in params or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    except (TypeError, ValueError):  # a builtin without a signature
        quantiles = False

    def bench(fn):
        ms = do_bench(fn, quantiles=(0.5, 0.2, 0.8)) if quantiles else do_bench(fn)
        times = list(ms) if isinstance(ms, (list, tuple)) else [ms]
        if not times or any(isinstance(t, bool) or not isinstance(t, numbers.Real)
                            or not math.isfinite(t) or t < 0 for t in times):
            raise TypeError(f"do_bench returned {ms!r}: it returns milliseconds, a float or a "
                            "list of floats, each finite and not negative")
        return [float(t) for t in times]

    return bench


def _check_number(name: str, value, *, integer: bool = False, minimum=None, maximum=None,
                  positive: bool = False) -> None:
    """A numeric option checked here: the native side would read a NaN, a
    negative count or a string as garbage (a NaN ``rep`` aborted the
    interpreter) or as a bare std::bad_cast."""
    if value is None:
        return
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        want = "an int" if integer else "a number"
        raise ConfigError(f"{name}={value!r} is a {type(value).__name__}: give {want}",
                          code="invalid_argument")
    if not integer and not math.isfinite(value):
        raise ConfigError(f"{name}={value!r}: give a finite number", code="invalid_argument")
    if (minimum is not None and value < minimum) or (positive and value <= 0):
        bound = "greater than 0" if positive else f"at least {minimum}"
        raise ConfigError(f"{name}={value!r}: it must be {bound}", code="invalid_argument")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{name}={value!r}: it must be at most {maximum}", code="invalid_argument")
