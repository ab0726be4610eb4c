"""The framework tuning API, for a FlashInfer or TensorRT-LLM user: runners
with tactics, ``choose_one`` with dynamic-shape buckets, and the ``tuning``
scope. Decisions are keyed on the op, each runner's name and version, and
the call's profile (dtype and bucketed shape of every tensor input)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import contextmanager
from contextvars import ContextVar

from . import _kiln


class Runner:
    """One implementation of an op. Subclass it:

    ``get_valid_tactics(inputs, profile)`` returns the tactics (ints) that
    can serve ``inputs`` (``profile``: each input's shape); tactic -1, the
    fallback, is always valid and must handle every shape.
    ``forward(inputs, tactic=-1, do_preparation=False)`` runs a tactic
    (outputs are among the inputs); with ``do_preparation`` it only
    prepares (compiles, transforms weights) and is never timed.

    ``name`` and ``version`` identify the runner across processes (bump the
    version when tactics change meaning)."""

    version = "1"

    @property
    def name(self) -> str:
        return type(self).__module__ + "." + type(self).__qualname__

    def get_valid_tactics(self, inputs, profile) -> list:
        return []

    def forward(self, inputs, tactic: int = -1, do_preparation: bool = False):
        raise NotImplementedError(f"{type(self).__name__}.forward")


class DynamicDim:
    """Dimension ``dim`` of input ``input`` varies between calls; it is tuned
    for each of ``buckets``, and a call's size maps to the smallest bucket
    at least as large (or ``map(size)``, snapped to the nearest bucket)."""

    __slots__ = ("input", "dim", "buckets", "map")

    def __init__(self, input: int, dim: int, buckets, map=None):
        from .errors import ConfigError

        for what, v in (("input", input), ("dim", dim)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ConfigError(f"DynamicDim {what}={v!r}: give an index, an int from 0 "
                                  "(count from the front; -1 is not taken)", code="invalid_argument")
        self.input = int(input)
        self.dim = int(dim)
        self.buckets = tuple(int(b) for b in buckets)
        if any(b < 1 for b in self.buckets):
            raise ConfigError(f"DynamicDim buckets={self.buckets}: every bucket is a size of 1 "
                              "or more", code="invalid_argument")
        if map is not None and not callable(map):
            raise ConfigError(f"DynamicDim map={map!r}: give a function of the size, or None",
                              code="invalid_argument")
        self.map = map

    def __repr__(self) -> str:
        return f"kiln.DynamicDim(input={self.input}, dim={self.dim}, buckets={self.buckets})"


def power_of_two_buckets(lo: int, hi: int) -> tuple:
    """1, 2, 4, ... from the first power of two >= lo up to hi (and hi)."""
    out, b = [], 1
    while b < lo:
        b *= 2
    while b < hi:
        out.append(b)
        b *= 2
    out.append(hi)
    return tuple(out)


# Built specs, newest last, at most _SPECS_KEPT. The key holds the
# callables themselves (a map, a constraint), not their id(): an id is
# reused once its object dies, and would alias a new callable to an old
# spec. Bounded, so that a caller making a fresh lambda per call keeps
# neither the lambdas nor their specs alive for the process's life.
_SPECS_KEPT = 256
_specs: OrderedDict = OrderedDict()
_specs_lock = threading.Lock()


def _spec(dynamic: Sequence[DynamicDim], constraints: Sequence, max_bucket: int):
    from .errors import ConfigError

    for d in dynamic:
        if not isinstance(d, DynamicDim):
            raise ConfigError(f"dynamic= holds {d!r}: give kiln.DynamicDim(input, dim, buckets)",
                              code="invalid_argument")
    for c in constraints:
        if (not isinstance(c, (tuple, list)) or len(c) != 3 or not callable(c[2])
                or any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in c[:2])):
            raise ConfigError(f"constraints= holds {c!r}: each is (input, dim, f(profile) -> size)",
                              code="invalid_argument")
    key = (
        tuple((d.input, d.dim, d.buckets, _Same(d.map)) for d in dynamic),
        tuple((c[0], c[1], _Same(c[2])) for c in constraints),
        max_bucket,
    )
    with _specs_lock:
        spec = _specs.get(key)
        if spec is not None:
            _specs.move_to_end(key)
            return spec
    spec = _kiln._Spec(list(dynamic), [tuple(c) for c in constraints], int(max_bucket))
    with _specs_lock:
        _specs[key] = spec
        while len(_specs) > _SPECS_KEPT:
            _specs.popitem(last=False)
    return spec


class _Same:
    """A callable in a spec's key: equal only to itself (by identity, as
    the spec calls it), hashable even when the callable is not."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Same) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)


# The innermost kiln.tuning() block of this thread or asyncio task (a
# _kiln._Scope), or None. A contextvar, not a thread-local stack: tasks on
# one thread enter and leave their blocks in any order, and each must see
# only its own.
_scope: ContextVar = ContextVar("kiln_tuning_scope", default=None)


def choose_one(op: str, runners: Sequence[Runner], inputs: Sequence, *,
               dynamic: Sequence[DynamicDim] = (), constraints: Sequence = (),
               max_bucket: int = 0):
    """The best ``(runner, tactic)`` of ``op`` for ``inputs``: from this
    process's memory, else a tuning cache, else (inside ``kiln.tuning()``)
    a tuning pass over every profile (the product of the buckets), else the
    fallback ``(runners[0], -1)``. ``constraints``: ``(input, dim,
    f(profile) -> size)`` for dims that follow from the dynamic ones."""
    runner, tactic, _source = _kiln._choose_one(
        op, list(runners), list(inputs), _spec(dynamic, constraints, max_bucket), _scope.get())
    return runner, tactic


def choose_one_source(op: str, runners: Sequence[Runner], inputs: Sequence, **kw) -> str:
    """Where choose_one's decision came from: "memory", "disk", "tuned",
    "fallback" or "skipped"."""
    return _kiln._choose_one(op, list(runners), list(inputs),
                             _spec(kw.get("dynamic", ()), kw.get("constraints", ()),
                                   kw.get("max_bucket", 0)), _scope.get())[2]


@contextmanager
def tuning(tune: bool = True, *, skip_ops: Iterable[str] = (), cache: str | None = None,
           rank: int | None = None):
    """Turns tuning on (or off) for the block, in this thread or asyncio
    task only (a contextvar). ``skip_ops`` take their fallback at once
    (nested scopes take the union; the outer set returns at exit). ``cache``: a JSON file of decisions, one per rank
    ("tuning.json" -> "tuning.rank3.json" for rank 3), loaded at entry and
    saved at exit."""
    if isinstance(skip_ops, str):  # one op, not its letters
        skip_ops = (skip_ops,)
    if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int) or rank < 0):
        from .errors import ConfigError
        # The rank names the decisions file (tuning.rank3.json): a negative
        # or non-int rank would name a file no other run reads.
        raise ConfigError(f"rank={rank!r}: give this process's rank, an int from 0, or None",
                          code="invalid_argument")
    scope = _kiln._Scope(bool(tune), sorted(set(skip_ops)), None if cache is None else str(cache),
                         rank, _scope.get())
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        try:
            _scope.reset(token)
        except ValueError:  # left in another context than it was entered in
            pass
        scope.close()


def _tuning_on() -> bool:
    """Whether this thread or task is inside a kiln.tuning(True) block."""
    scope = _scope.get()
    return scope is not None and scope.tune


def _skipped_ops() -> list:
    """The ops skipped here now, sorted."""
    scope = _scope.get()
    return [] if scope is None else scope.skipped


def stats() -> dict:
    """The framework tuner's counters (disk hits, tuned profiles, ...)."""
    return _kiln._framework_stats()
