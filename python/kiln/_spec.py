"""A kiln.Kernel's description for the native side: the one dict that both
``kiln.autotune`` (a tuned kernel) and a fixed-config call
(``kernel(*args, BLOCK=128)``) hand to ``_kiln``, built in one place so
both read a kernel, its space and its launch rule alike."""

from __future__ import annotations

from collections.abc import Mapping

from . import _kiln
from .config import Config
from .errors import ConfigError


def kernel_spec(kernel, *, configs=None, space=None, constraints=None, default=None,
                prune=None, key=(), buckets=(), outputs=None, restore_value=(), reset_to_zero=(),
                reference=None, check=True, tuning=None) -> dict:
    """The spec of ``kernel`` (a kiln.Kernel) over ``configs`` (a list) or
    ``space`` (a dict name -> values); ``tuning`` holds the search and
    timing options (search, max_configs, budget_s, warmup, rep, deadline_s,
    rtol, atol)."""
    prune = dict(prune or {})
    params, listed, default = _space_of(configs, space, default)
    cons = _constraints_of(constraints)
    top_k = prune.get("top_k", 0)
    # The code of what decides a config's outputs or the space enters the
    # key; the benchmark hooks do not: they prepare and time runs (see
    # BenchHooks in kiln/tuner/tune_options.hpp).
    version = "|".join([
        kernel.version,
        _code_of(kernel.grid), _code_of(kernel.block), _code_of(kernel.shared_bytes),
        _code_of(prune.get("perf_model")), _code_of(prune.get("early_config_prune")),
        *(_code_of(f) for _, f in cons),
    ])
    spec = {
        "name": kernel.name,
        "source": kernel.source,
        "entry": kernel.entry,
        "options": kernel.options,
        "headers": kernel.headers,
        "version": version,
        "backend": kernel.backend,
        "signature": kernel.signature,
        "params": params,
        "listed": listed,
        "constraints": cons,
        "default": _as_dict(default, "default") if default is not None else None,
        "config_cls": Config,
        "grid": kernel.grid,
        "block": kernel.block,
        "shared_bytes": kernel.shared_bytes,
        "outputs": list(outputs) if outputs is not None else None,  # None: the native default
        "restore_value": list(restore_value),
        "reset_to_zero": list(reset_to_zero),
        "key": list(key),
        "buckets": list(buckets),  # (name, dim or None, buckets, map or None)
        "perf_model": prune.get("perf_model"),
        "top_k": float(top_k or 0),
        "early_config_prune": prune.get("early_config_prune"),
        "reference": reference,
        "check": bool(check),
    }
    tuning = dict(tuning or {})
    for name in ("max_configs", "budget_s", "warmup", "rep", "deadline_s", "rtol", "atol",
                 "effort", "warm_start", "finalists", "min_reps", "max_reps", "early_stop",
                 "delay_us", "compile_deadline_s", "pre_hook", "post_hook", "do_bench"):
        spec[name] = tuning.get(name)
    spec["search"] = tuning.get("search")
    spec["cold_cache"] = bool(tuning.get("cold_cache", False))
    spec["cuda_graph"] = bool(tuning.get("cuda_graph", False))
    if prune.get("perf_model") is not None and not top_k:
        raise ConfigError("prune_configs_by has a perf_model but no top_k: say how many configs to keep",
                          code="invalid_argument")
    return spec


def fixed_config_spec(kernel, params: dict) -> dict:
    """The spec of ``kernel`` with the one config ``params`` (a fixed-config
    call: not tuned, nothing checked)."""
    return kernel_spec(kernel, configs=[Config(**params)], check=False)


def _space_of(configs, space, default):
    """(params, listed, default): each parameter's values, the listed
    configs (None for a product space) and the default config."""
    if configs is None:
        params = []
        for n, vals in dict(space).items():
            vals = list(vals) if not isinstance(vals, (str, bytes)) else [vals]
            if not vals:
                raise ConfigError(f"space[{n!r}] is empty: give it at least one value", code="invalid_argument")
            params.append((n, vals))
        return params, None, default
    listed = [_as_dict(c, "a config") for c in configs]
    if not listed:
        raise ConfigError("autotune got configs=[]: list at least one config", code="invalid_argument")
    names = list(listed[0])
    values: dict = {n: [] for n in names}
    for c in listed:
        if sorted(c) != sorted(names):
            raise ConfigError(
                f"configs differ in their parameters: {sorted(names)} and {sorted(c)}: "
                "give every config the same parameters",
                code="invalid_argument",
            )
        for n in names:
            if c[n] not in values[n]:
                values[n].append(c[n])
    return [(n, values[n]) for n in names], listed, listed[0] if default is None else default


def _constraints_of(constraints) -> list:
    """(name, callable) pairs, each name unique (two lambdas are both
    "<lambda>")."""
    if constraints is None:
        return []
    items = constraints.items() if isinstance(constraints, Mapping) else (
        (getattr(f, "__name__", f"constraint{i}"), f) for i, f in enumerate(constraints))
    cons = []
    for n, f in items:
        if not callable(f):
            raise ConfigError(f"constraint {n!r} is not callable: give a function of a config dict",
                              code="invalid_argument")
        cons.append((n, f))
    seen: dict = {}
    uniq = []
    for n, f in cons:
        seen[n] = seen.get(n, 0) + 1
        uniq.append((n if seen[n] == 1 else f"{n}_{seen[n]}", f))
    return uniq


def _code_of(obj) -> str:
    """What a hook's code is, for the kernel's version: an edited launch rule
    or prune tunes again."""
    if obj is None:
        return ""
    code = getattr(obj, "__code__", None)
    if code is None:
        return repr(obj) if not callable(obj) else getattr(obj, "__qualname__", repr(type(obj)))
    # Kiln's own digest: hashlib would load OpenSSL (3 ms of a warm call).
    parts = [code.co_code, repr(code.co_consts).encode(), repr(code.co_names).encode()]
    return _kiln._digest(parts)[:16]


def _as_dict(config, what: str) -> dict:
    if isinstance(config, Config):
        return dict(config.kwargs)
    if isinstance(config, Mapping):
        return dict(config)
    raise ConfigError(f"{what} is a {type(config).__name__}: give a kiln.Config or a dict", code="invalid_argument")

