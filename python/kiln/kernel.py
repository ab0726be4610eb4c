"""The DSL runtime: ``kiln.compile`` (source text in, a launchable, cached
kernel out) and ``kiln.Kernel`` (a kernel template with its signature and
launch rule, for ``kiln.autotune``)."""

from __future__ import annotations

from . import _kiln
from ._spec import fixed_config_spec

CompiledKernel = _kiln.CompiledKernel


def compile(
    source: str,
    entry: str,
    *,
    backend: str = "auto",
    options: Sequence[str] = (),
    headers: Mapping[str, str] | None = None,
    name: str | None = None,
    signature: Sequence[str] | None = None,
) -> CompiledKernel:
    """Compiles ``entry`` (a function or template instance of ``source``)
    for ``backend`` ("cpu", "cuda" or "auto": CUDA when a device is present)
    and loads it. Served from the artifact cache when it holds the same
    source, entry, options, headers and toolchain (``from_cache`` is then
    True). ``signature`` (``["x: f32*", "n: i32"]``) types the arguments;
    without it they are inferred at each launch (tensors, bool, int as i32
    or i64, float as f32, numpy scalars by their dtype).

    Launch: ``kernel(*args, grid=, block=, shared_bytes=, stream=)``.
    Raises kiln.CompileError with the compiler's log on a bad program."""
    _check_texts(source, entry, options, headers, signature)
    return _kiln._compile(
        source,
        entry,
        backend,
        list(options),
        dict(headers or {}),
        name,
        list(signature) if signature is not None else None,
    )


class Kernel:
    """A kernel template: ``source`` with an ``entry`` whose ``{NAME}``
    placeholders a config fills (``"saxpy<{BLOCK}>"``), the ``signature``
    of its parameters and its launch rule. ``grid``, ``block`` and
    ``shared_bytes`` are tuples (or ints) or callables of ``meta``: the
    call's arguments by name plus the config's parameters, as in Triton.

    Decorate it with ``kiln.autotune`` to tune it; call it directly with a
    config's parameters as keywords to run that config:
    ``kernel(*args, BLOCK=1024)``.

    ``**tuning``: ``kiln.autotune``'s tuning keywords (search, max_configs,
    budget_s, warmup, rep, deadline_s, effort, warm_start, finalists,
    cold_cache, cuda_graph, min_reps, max_reps, early_stop, delay_us,
    compile_deadline_s, pre_hook, post_hook, do_bench) as this kernel's
    defaults: one given to ``kiln.autotune`` wins over the kernel's, and the
    environment (KILN_SEARCH, KILN_EFFORT, KILN_BUDGET_S) over both."""

    def __init__(
        self,
        source: str,
        entry: str,
        *,
        signature: Sequence[str],
        grid,
        block=(1, 1, 1),
        shared_bytes=0,
        backend: str = "auto",
        options: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        version: str | None = None,
        **tuning,
    ):
        from ._tuning import checked_tuning
        from .errors import ConfigError

        if not isinstance(source, str) or not source.strip():
            raise ConfigError("Kernel source is empty: pass the kernel's source text", code="invalid_argument")
        if signature is None:
            raise ConfigError("kiln.Kernel needs signature=[\"x: f32*\", \"n: i32\", ...]: it names "
                              "and types the arguments", code="invalid_argument")
        _check_texts(source, entry, options, headers, signature)
        # The one signature parser (the native one, as a JSON spec's): a bad
        # entry is refused here, where it is written.
        self.arg_names = _kiln._signature_names(list(signature))
        self.source = source
        self.entry = entry
        self.signature = list(signature)
        self.grid = grid
        self.block = block
        self.shared_bytes = shared_bytes
        self.backend = backend
        self.options = list(options)
        self.headers = dict(headers or {})
        self.name = name or _name_of_entry(entry)
        self.version = version or ""
        # The tuning defaults given (checked as kiln.autotune checks its own).
        self.tuning = checked_tuning(tuning, who="kiln.Kernel")
        self._direct: dict = {}

    def __call__(self, *args, stream=None, **params):
        """Runs the config ``params``: compiled (or loaded from the artifact
        cache) once, then from memory; not tuned, checked or recorded."""
        key = tuple(sorted(params.items()))
        fixed = self._direct.get(key)
        if fixed is None:
            fixed = _kiln._FixedConfig(fixed_config_spec(self, params))
            self._direct[key] = fixed
        return fixed(*args, stream=stream)

    def __repr__(self) -> str:
        return f"<kiln.Kernel {self.name} ({self.entry}) on {self.backend}>"


def _check_texts(source, entry, options, headers, signature) -> None:
    """The text arguments, checked before the native side reads them (which
    would answer a wrong type with a bare std::bad_cast or nanobind's list
    of overloads)."""
    from .errors import ConfigError

    def bad(what: str, value, want: str):
        raise ConfigError(f"{what} is {value!r} ({type(value).__name__}): {want}", code="invalid_argument")

    if not isinstance(source, str):
        bad("source", source, "give the kernel's source text as a str")
    if not isinstance(entry, str) or not entry.strip():
        bad("entry", entry, "give the kernel's function name (or a template instance) as a str")
    if isinstance(options, str):
        bad("options", options, f"give a list of options, e.g. [{options!r}]")
    if any(not isinstance(o, str) for o in options):
        bad("options", list(options), "every option is a str")
    if headers is not None:
        if not hasattr(headers, "items"):
            bad("headers", headers, "give a dict of include name -> header text")
        for name, text in headers.items():
            if not isinstance(name, str) or not isinstance(text, str):
                bad(f"headers[{name!r}]", text, "a header maps an include name (str) to its text (str)")
    if signature is not None:
        if isinstance(signature, str):
            bad("signature", signature, f"give a list, one \"name: type\" per argument, e.g. [{signature!r}]")
        if any(not isinstance(e, str) for e in signature):
            bad("signature", list(signature), "each entry is a str \"name: type\", e.g. \"x: f32*\"")


def _name_of_entry(entry: str) -> str:
    head = entry.split("<", 1)[0].split("(", 1)[0].strip()
    return head.rsplit("::", 1)[-1] or "kernel"
