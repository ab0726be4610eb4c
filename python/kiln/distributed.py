"""``kiln.set_collective``: the ranks of a job decide together. Without it
each process decides alone, so ranks can serve different kernels, and a rank
that hits its cache while another tunes is how ranks end up waiting on each
other."""

from __future__ import annotations

import os

from . import _kiln
from .errors import ConfigError

_STRATEGIES = ("broadcast", "parallel", "merge", "independent")


def set_collective(group, strategy: str = "broadcast", timeout_s: float | None = None) -> None:
    """Every ``kiln.autotune`` kernel and ``kiln.choose_one`` of this process
    decides with the ranks of ``group`` from now on (``None``: alone again).

    group      an mpi4py communicator (``MPI.COMM_WORLD``), or any object with
               ``rank`` and ``size`` (ints or methods), ``all_gather(bytes)``
               returning every rank's bytes in rank order, and
               ``broadcast(bytes, root)`` returning root's bytes (a few lines
               over ``torch.distributed``'s object collectives: docs/python.md)
    strategy   "broadcast": rank 0 tunes, every rank gets its decision;
               "parallel": the configs are dealt out across ranks and the
               winner chosen from all; "merge": every rank measures every
               config, each time is the median over ranks; "independent":
               alone, as with ``None``
    timeout_s  how long one exchange waits for the slowest rank before this
               rank ends the job with a message naming it (default
               KILN_DISTRIBUTED_TIMEOUT_S, else 3600): a missing rank never
               hangs the job

    Every rank must then make the same tuned calls in the same order. A
    decision any rank finds in its cache is every rank's, measured by none;
    ranks that ask about different problems get an error naming both."""
    if strategy not in _STRATEGIES:
        raise ConfigError(f"set_collective: strategy={strategy!r}; use one of "
                          + ", ".join(_STRATEGIES), code="invalid_argument")
    if group is not None:
        named = [a for a in ("all_gather", "allgather") if hasattr(group, a)]
        casts = [a for a in ("broadcast", "bcast") if hasattr(group, a)]
        if not named or not casts:
            raise ConfigError(
                f"set_collective: {type(group).__name__} has no all_gather/allgather and "
                "broadcast/bcast; pass an mpi4py communicator or an object with "
                "all_gather(bytes) and broadcast(bytes, root)", code="invalid_argument")
    _kiln._set_collective(group, strategy, _timeout(timeout_s))


def _timeout(timeout_s) -> int:
    where = "timeout_s"
    if timeout_s is None:
        text = os.environ.get("KILN_DISTRIBUTED_TIMEOUT_S", "")
        if not text:
            return 3600
        where, timeout_s = "KILN_DISTRIBUTED_TIMEOUT_S", text
    try:
        seconds = float(timeout_s)
    except (TypeError, ValueError):
        seconds = -1.0
    if not 0 < seconds <= 30 * 86400:
        raise ConfigError(f"set_collective: {where}={timeout_s!r} is not a number of seconds "
                          "in (0, 30 days]", code="invalid_argument")
    return max(1, round(seconds))
