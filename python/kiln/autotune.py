"""``kiln.autotune``: Triton's ``@autotune`` on Kiln's tuner. The first call
of each key tunes (every config compiled on a thread pool and benchmarked
in worker processes as it lands); the same key again is served from
memory, a new process from the tuning cache on disk, and an edited kernel
is tuned again (its content is in the key)."""

from __future__ import annotations

import functools
from collections.abc import Mapping

from . import _kiln
from .config import Config
from .errors import ConfigError
from ._spec import kernel_spec
from .kernel import Kernel


def autotune(
    configs: Sequence[Config] | None = None,
    *,
    space: Mapping[str, Sequence] | None = None,
    constraints=None,
    key: Sequence[str],
    default=None,
    prune_configs_by: Mapping | None = None,
    reset_to_zero: Iterable[str] = (),
    restore_value: Iterable[str] = (),
    check: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    reference: Callable | None = None,
    search: str = "auto",
    max_configs: int | None = None,
    budget_s: float | None = None,
    warmup: int | None = None,
    rep: float | None = None,
    outputs: Sequence[str] | None = None,
    deadline_s: float | None = None,
    effort: str | None = None, warm_start: int | None = None, finalists: int | None = None,
    cold_cache: bool = False, cuda_graph: bool = False, min_reps: int | None = None,
    max_reps: int | None = None, early_stop: float | None = None, delay_us: float | None = None,
    compile_deadline_s: float | None = None,
):
    """Decorates a ``kiln.Kernel`` into a tuned callable (``Autotuned``).

    configs        the configs to try (kiln.Config), or
    space          a dict name -> values: their product, filtered by
    constraints    callables (or a dict name -> callable) of a config dict
                   returning True to keep it
    key            argument names whose values (scalars) select a tuning
                   record; tensors always enter with their dtype, shape and
                   stride pattern. A dict buckets sizes (dynamic shapes):
                   {"n": kiln.power_of_two_buckets(1, 4096), "x": {0: [64,
                   512, 4096]}, "m": None} - per integer scalar or tensor
                   dim, a bucket list (a size maps to the smallest bucket
                   >= it, else the largest) or a function size ->
                   representative; None: exact. A bucket is tuned once, on
                   its first call's arguments, and serves every size in it;
                   extents not named stay exact
    default        the config to compare against and fall back to (a
                   kiln.Config or dict; default: the first config)
    prune_configs_by  {"perf_model": f(**meta) -> estimated time,
                   "top_k": int or fraction, "early_config_prune":
                   f(configs, named_args) -> configs}, with Triton's meaning
    reset_to_zero / restore_value  argument names zeroed before every run /
                   restored after every benchmark run
    check, rtol, atol, reference  output checking: each config's outputs
                   against the default config's (or ``reference(*args)``,
                   which writes the expected outputs in place)
    search, max_configs, budget_s  the search strategy ("auto": every config
                   when the budget covers the space, else "hybrid") and its budget
    warmup, rep    warm-up runs per config; milliseconds of timed runs
    outputs        the arguments compared (default: every tensor but those declared
                   "const T*", unless all are)
    deadline_s     seconds a config's benchmark may take before it is
                   abandoned as hung (default 10)
    effort, warm_start, finalists, cold_cache, cuda_graph, min_reps, max_reps, early_stop,
    delay_us, compile_deadline_s: the C++ options, tabled in docs/python.md, as is
    the environment (KILN_SEARCH, KILN_EFFORT, KILN_BUDGET_S win over these).
    """
    key, buckets = _checked_key(key, configs, space)
    prune = _checked_options(
        reset_to_zero=reset_to_zero, restore_value=restore_value, outputs=outputs,
        max_configs=max_configs, warmup=warmup, rep=rep, budget_s=budget_s,
        deadline_s=deadline_s, rtol=rtol, atol=atol, prune_configs_by=prune_configs_by,
        reference=reference, search=search)
    measure = _checked_measure(search=search, effort=effort, warm_start=warm_start,
                               finalists=finalists, cold_cache=cold_cache, cuda_graph=cuda_graph,
                               min_reps=min_reps, max_reps=max_reps, early_stop=early_stop,
                               delay_us=delay_us, compile_deadline_s=compile_deadline_s)

    return functools.partial(_decorate, dict(
        configs=configs, space=space, constraints=constraints, key=key, buckets=buckets,
        default=default, prune=prune, reset_to_zero=list(reset_to_zero),
        restore_value=list(restore_value), check=check, rtol=rtol, atol=atol,
        reference=reference, search=search, max_configs=max_configs, budget_s=budget_s,
        warmup=warmup, rep=rep, outputs=outputs, deadline_s=deadline_s, measure=measure))


def _decorate(declared: dict, kernel: Kernel) -> "Autotuned":
    """What ``kiln.autotune(...)`` returns, applied to the kernel."""
    if not isinstance(kernel, Kernel):
        raise ConfigError(f"kiln.autotune decorates a kiln.Kernel, got {type(kernel).__name__}",
                          code="invalid_argument")
    return Autotuned(kernel, **declared)


def _checked_key(key, configs, space) -> tuple:
    """``key`` as a list of argument names and its bucket rules, (name, dim
    or None, buckets, map or None) each, after the configs-or-space check."""
    key_given = key
    if configs is None and space is None:
        raise ConfigError(
            "autotune needs configs=[kiln.Config(...), ...] or space={name: [values]}",
            code="invalid_argument",
        )
    if configs is not None and space is not None:
        raise ConfigError(
            "autotune got both configs= and space=: give one (a list, or a product)",
            code="invalid_argument",
        )
    if isinstance(key, Mapping):
        return _bucketed_key(key)
    if isinstance(key, str):
        key = [key]
    try:
        key = list(key)
    except TypeError:
        key = None
    if key is None or not all(isinstance(k, str) for k in key):
        raise ConfigError(f"key={key_given!r}: give a list of argument names (their values "
                          "select a decision), or key=[] for one decision for every call",
                          code="invalid_argument")
    return key, []


def _bucketed_key(key: Mapping) -> tuple:
    """A key given as a dict name -> rule (or, for a tensor, dim -> rule)."""
    names, buckets = [], []
    for name, rule in key.items():
        if not isinstance(name, str):
            raise ConfigError(f"key has {name!r}: its keys are argument names",
                              code="invalid_argument")
        names.append(name)
        dims = rule.items() if isinstance(rule, Mapping) else [(None, rule)]
        for dim, r in dims:
            what = f"key={{{name!r}: {{{dim!r}: ...}}}}" if dim is not None else f"key={{{name!r}: ...}}"
            if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 0):
                raise ConfigError(f"{what}: a tensor's dims are ints from 0", code="invalid_argument")
            if r is not None:
                buckets.append((name, dim, *_bucket_rule(what, r)))
    return names, buckets


def _bucket_rule(what: str, rule) -> tuple:
    """(buckets, map) of a rule: a list of sizes, or a function size -> size."""
    if callable(rule):
        return (), rule
    try:
        sizes = tuple(rule)
    except TypeError:
        sizes = None
    if (not sizes or not all(isinstance(b, int) and not isinstance(b, bool) and b >= 1
                             for b in sizes)):
        raise ConfigError(f"{what} is {rule!r}: give buckets (kiln.power_of_two_buckets(1, 4096) "
                          "or a list of sizes of 1 or more), a function size -> representative, "
                          "or None for the exact size", code="invalid_argument")
    return sizes, None


def _checked_options(*, reset_to_zero, restore_value, outputs, max_configs, warmup, rep,
                     budget_s, deadline_s, rtol, atol, prune_configs_by, reference,
                     search) -> dict:
    """The options, each checked before the native side reads it; returns
    prune_configs_by as a dict."""
    for what, names in (("reset_to_zero", reset_to_zero), ("restore_value", restore_value),
                        ("outputs", outputs)):
        if isinstance(names, str):
            raise ConfigError(f"{what}={names!r} is a string: give a list of argument names, "
                              f"e.g. {what}=[{names!r}]", code="invalid_argument")
    _check_number("max_configs", max_configs, integer=True, minimum=0)
    _check_number("warmup", warmup, integer=True, minimum=0, maximum=1_000_000)
    _check_number("rep", rep, minimum=0)
    _check_number("budget_s", budget_s, minimum=0)
    _check_number("deadline_s", deadline_s, minimum=0, positive=True)
    _check_number("rtol", rtol, minimum=0)
    _check_number("atol", atol, minimum=0)
    prune = dict(prune_configs_by or {})
    unknown = set(prune) - {"perf_model", "top_k", "early_config_prune"}
    if unknown:
        raise ConfigError(
            f"prune_configs_by has {sorted(unknown)}: it takes perf_model, top_k and "
            "early_config_prune",
            code="invalid_argument",
        )
    if prune.get("top_k") is not None:
        _check_number("prune_configs_by['top_k']", prune["top_k"], minimum=0, positive=True)
    for hook in ("perf_model", "early_config_prune"):
        if prune.get(hook) is not None and not callable(prune[hook]):
            raise ConfigError(f"prune_configs_by[{hook!r}] is a {type(prune[hook]).__name__}: "
                              "give a function", code="invalid_argument")
    if reference is not None and not callable(reference):
        raise ConfigError(f"reference is a {type(reference).__name__}: give a function that "
                          "writes the expected outputs in place", code="invalid_argument")
    if not isinstance(search, str):
        raise ConfigError(f"search={search!r}: give a strategy name such as \"auto\"",
                          code="invalid_argument")
    return prune


def _checked_measure(*, search, **measure) -> dict:
    """The search and measurement knobs beyond Triton's, checked; as the
    native side reads them (None: the C++ default)."""
    effort = measure["effort"]
    if effort is not None and effort not in ("quick", "default", "full"):
        raise ConfigError(f"effort={effort!r}: give \"quick\", \"default\" or \"full\"",
                          code="invalid_argument")
    if effort is not None and search != "auto":
        raise ConfigError(f"effort={effort!r} sizes the auto search, which search={search!r} "
                          "bypasses: drop effort, or size it with max_configs",
                          code="invalid_argument")
    for name in ("warm_start", "finalists"):
        _check_number(name, measure[name], integer=True, minimum=0, maximum=1_000_000)
    for name in ("min_reps", "max_reps"):
        _check_number(name, measure[name], integer=True, minimum=1, maximum=1_000_000)
    if (measure["min_reps"] is not None and measure["max_reps"] is not None
            and measure["min_reps"] > measure["max_reps"]):
        raise ConfigError(f"min_reps={measure['min_reps']} is above max_reps="
                          f"{measure['max_reps']}", code="invalid_argument")
    _check_number("early_stop", measure["early_stop"], minimum=0)
    if measure["early_stop"] is not None and 0 < measure["early_stop"] < 1:
        raise ConfigError(f"early_stop={measure['early_stop']!r} would stop configs faster than "
                          "the best: give 0 (off) or a factor of 1 or more", code="invalid_argument")
    _check_number("delay_us", measure["delay_us"], minimum=0)
    _check_number("compile_deadline_s", measure["compile_deadline_s"], minimum=0, positive=True)
    for name in ("cold_cache", "cuda_graph"):
        if not isinstance(measure[name], bool):
            raise ConfigError(f"{name}={measure[name]!r}: give True or False",
                              code="invalid_argument")
    return measure


def _check_number(name: str, value, *, integer: bool = False, minimum=None, maximum=None,
                  positive: bool = False) -> None:
    """A numeric option checked here: the native side would read a NaN, a
    negative count or a string as garbage (a NaN ``rep`` aborted the
    interpreter) or as a bare std::bad_cast."""
    if value is None:
        return
    import math
    import numbers

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


class Autotuned(_kiln._Autotuned):
    """A tuned kernel: call it like the kernel (arguments in signature
    order, ``stream=`` on CUDA). ``best_config`` is the config of the last
    call; ``stats()``, ``measurements(key)`` and ``trace(path)`` report."""

    def __init__(self, kernel: Kernel, *, configs, space, constraints, key, buckets, default, prune,
                 reset_to_zero, restore_value, check, rtol, atol, reference, search,
                 max_configs, budget_s, warmup, rep, outputs, deadline_s, measure=None):
        tuning = {"search": search, "max_configs": max_configs, "budget_s": budget_s,
                  "warmup": warmup, "rep": rep, "deadline_s": deadline_s, "rtol": rtol,
                  "atol": atol, **(measure or {})}
        super().__init__(kernel_spec(
            kernel, configs=configs, space=space, constraints=constraints, default=default,
            prune=prune, key=key, buckets=buckets, outputs=outputs, restore_value=restore_value,
            reset_to_zero=reset_to_zero, reference=reference, check=check, tuning=tuning))
        self.kernel = kernel
        self.key = list(key)
        self.arg_names = kernel.arg_names

    def stats(self) -> dict:
        """hits, misses, configs, compiled, artifact_hits, benchmarked,
        failed, failed_by_reason, compile/benchmark/overlap/wall seconds."""
        return self._stats()

    def measurements(self, key=None) -> list:
        """Each config's status, median, min, max, spread (seconds) for the
        tuning of ``key`` (a tuple of the key arguments' values, a tensor
        by its shape; default: the last key tuned)."""
        table = self._measurements()
        if key is None:
            return list(table.values())[-1] if table else []
        if not isinstance(key, tuple):
            key = (key,)
        if key not in table:
            raise KeyError(f"{self._name} has no measurements for the key {key!r} (known: {list(table)})")
        return table[key]

    def source(self, key=None) -> str:
        """Where the decision for ``key`` came from: "tuned", "memory",
        "disk"; with tuning off, "nearest: <the tuned key served>" or
        "default". A bucketed size is given as its representative."""
        table = self._sources()
        if key is None:
            return list(table.values())[-1] if table else ""
        if not isinstance(key, tuple):
            key = (key,)
        if key not in table:
            raise KeyError(f"{self._name} has made no decision for the key {key!r} (known: {list(table)})")
        return table[key]

    def trace(self, path: str) -> None:
        """Writes a Chrome/Perfetto trace of each later tuning run to ``path``."""
        self._set_trace(str(path))

    def retune(self, on: bool = True) -> None:
        """Tunes every key again on its next call, even when a record exists."""
        self._set_retune(on)

    def __repr__(self) -> str:
        return f"<kiln.Autotuned {self._name}>"
