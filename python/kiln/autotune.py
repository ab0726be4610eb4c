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
from ._tuning import _check_number, checked_tuning, merged_tuning
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
    outputs: Sequence[str] | None = None,
    search: str | None = None, max_configs: int | None = None, budget_s: float | None = None,
    warmup: int | None = None, rep: float | None = None, deadline_s: float | None = None,
    effort: str | None = None, warm_start: int | None = None, finalists: int | None = None,
    cold_cache: bool | None = None, cuda_graph: bool | None = None, min_reps: int | None = None,
    max_reps: int | None = None, early_stop: float | None = None, delay_us: float | None = None,
    compile_deadline_s: float | None = None, pre_hook: Callable | None = None,
    post_hook: Callable | None = None, do_bench: Callable | None = None,
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
    outputs        the arguments compared (default: tensors but "const T*" ones, unless all are)

    The tuning keywords (a kiln.Kernel's defaults too; these win over the
    kernel's, KILN_SEARCH / KILN_EFFORT / KILN_BUDGET_S over both):
    search, max_configs, budget_s  the strategy ("auto": every config when
                   the budget covers the space, else "hybrid") and its budget
    warmup, rep    warm-up runs per config; milliseconds of timed runs
    deadline_s     seconds before a config's benchmark is abandoned as hung
    effort, warm_start, finalists, cold_cache, cuda_graph, min_reps, max_reps, early_stop,
    delay_us, compile_deadline_s: the C++ options (docs/python.md)
    pre_hook(nargs), post_hook(nargs, exception), do_bench(fn): Triton's, around
                   each benchmark run (nargs: the call's own arguments by name
                   plus the config's); do_bench returns milliseconds. With any
                   set, benchmarks run in a thread (no crash isolation).
    """
    key, buckets = _checked_key(key, configs, space)
    prune = _checked_options(
        reset_to_zero=reset_to_zero, restore_value=restore_value, outputs=outputs, rtol=rtol,
        atol=atol, prune_configs_by=prune_configs_by, reference=reference)
    tuning = checked_tuning(dict(
        search=search, max_configs=max_configs, budget_s=budget_s, warmup=warmup, rep=rep,
        deadline_s=deadline_s, effort=effort, warm_start=warm_start, finalists=finalists,
        cold_cache=cold_cache, cuda_graph=cuda_graph, min_reps=min_reps, max_reps=max_reps,
        early_stop=early_stop, delay_us=delay_us, compile_deadline_s=compile_deadline_s,
        pre_hook=pre_hook, post_hook=post_hook, do_bench=do_bench))

    return functools.partial(_decorate, dict(
        configs=configs, space=space, constraints=constraints, key=key, buckets=buckets,
        default=default, prune=prune, reset_to_zero=list(reset_to_zero),
        restore_value=list(restore_value), check=check, rtol=rtol, atol=atol,
        reference=reference, outputs=outputs), tuning)


def _decorate(declared: dict, tuning: dict, kernel: Kernel) -> "Autotuned":
    """What ``kiln.autotune(...)`` returns, applied to the kernel: its
    tuning keywords over the kernel's."""
    if not isinstance(kernel, Kernel):
        raise ConfigError(f"kiln.autotune decorates a kiln.Kernel, got {type(kernel).__name__}",
                          code="invalid_argument")
    return Autotuned(kernel, **declared, tuning=merged_tuning(kernel.tuning, tuning))


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


def _checked_options(*, reset_to_zero, restore_value, outputs, rtol, atol, prune_configs_by,
                     reference) -> dict:
    """The options beyond the tuning keywords (_tuning.py), each checked
    before the native side reads it; returns prune_configs_by as a dict."""
    for what, names in (("reset_to_zero", reset_to_zero), ("restore_value", restore_value),
                        ("outputs", outputs)):
        if isinstance(names, str):
            raise ConfigError(f"{what}={names!r} is a string: give a list of argument names, "
                              f"e.g. {what}=[{names!r}]", code="invalid_argument")
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
    return prune


class Autotuned(_kiln._Autotuned):
    """A tuned kernel: call it like the kernel (arguments in signature
    order, ``stream=`` on CUDA). ``best_config`` is the config of the last
    call; ``stats()``, ``measurements(key)`` and ``trace(path)`` report."""

    def __init__(self, kernel: Kernel, *, configs, space, constraints, key, buckets, default, prune,
                 reset_to_zero, restore_value, check, rtol, atol, reference, outputs, tuning):
        tuning = {**tuning, "rtol": rtol, "atol": atol}
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
