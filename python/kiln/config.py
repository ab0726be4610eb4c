"""``kiln.Config``: one point of a kernel's config space, as in Triton."""

from __future__ import annotations


class Config:
    """A config: named parameter values (ints, bools or strings) that fill
    the ``{NAME}`` placeholders of a kernel's entry, options and headers.

    >>> kiln.Config(BLOCK=1024, VEC=4)
    kiln.Config(BLOCK=1024, VEC=4)
    """

    __slots__ = ("kwargs",)

    def __init__(self, **params):
        for name, value in params.items():
            if not isinstance(value, (int, bool, str)):
                from .errors import ConfigError

                raise ConfigError(
                    f"Config parameter {name}={value!r} is a {type(value).__name__}: "
                    "a config value is an int, a bool or a str",
                    code="invalid_argument",
                )
        self.kwargs = dict(sorted(params.items()))

    def all_kwargs(self) -> dict:
        """The parameters as a dict (Triton's name for it)."""
        return dict(self.kwargs)

    def __getitem__(self, name):
        return self.kwargs[name]

    def __eq__(self, other) -> bool:
        return isinstance(other, Config) and self.kwargs == other.kwargs

    def __hash__(self) -> int:
        return hash(tuple(self.kwargs.items()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"kiln.Config({inner})"


def cdiv(a: int, b: int) -> int:
    """Ceiling division: the number of blocks of ``b`` covering ``a``."""
    return -(-a // b)
