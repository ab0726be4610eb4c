"""Kiln's exceptions. Every one carries the evidence Kiln has: the message
names the problem and the fix; ``details`` holds the rest (a compiler log,
the options, the config, each config's failure)."""

from __future__ import annotations


class KilnError(Exception):
    """Base of Kiln's errors. ``code`` is Kiln's error code
    ("invalid_argument", "compile_failed", ...), ``details`` a dict."""

    def __init__(self, message: str, *, code: str = "internal", details: dict | None = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = dict(details or {})

    def __str__(self) -> str:
        extra = "".join(
            f"\n  {k}: {v}" for k, v in self.details.items() if k not in ("log", "kind", "failures_json")
        )
        log = self.details.get("log")
        if log:
            extra += "\n  log:\n" + "\n".join("    " + line for line in str(log).splitlines()[:40])
        return self.message + extra


class CompileError(KilnError):
    """The compiler rejected the program. ``log`` is the compiler's output,
    ``options`` the command line options, ``config`` the config (if any)."""

    @property
    def log(self) -> str:
        return self.details.get("log", "")

    @property
    def options(self) -> str:
        return self.details.get("options", "")

    @property
    def config(self) -> str:
        return self.details.get("config", "")


class LaunchError(KilnError):
    """The kernel failed to load or launch."""


class ConfigError(KilnError, ValueError):
    """A bad argument to Kiln: a config, a parameter, a launch extent, a
    signature; the message names it and the fix."""


class ArgumentError(KilnError, TypeError):
    """A call's argument does not match the kernel's signature."""


class NoValidConfigError(KilnError):
    """Tuning found no config that compiles, runs and gives the right
    output. ``failures`` lists (config, reason) for every config tried."""

    @property
    def failures(self) -> list:
        """[(config, reason)] for every config tried."""
        import json

        return [tuple(f) for f in json.loads(self.details.get("failures_json", "[]"))]


class UnavailableError(KilnError, RuntimeError):
    """A backend or device is absent here (the message says what and the fix)."""


_BY_CODE = {
    "compile_failed": CompileError,
    "launch_failed": LaunchError,
    "invalid_argument": ConfigError,
    "unavailable": UnavailableError,
}


def _from_native(code: str, message: str, details: dict) -> KilnError:
    """Called by the native module to build the exception of an error."""
    kind = details.get("kind")
    if kind == "no_valid_config":
        cls = NoValidConfigError
    elif kind == "argument":
        cls = ArgumentError
    else:
        cls = _BY_CODE.get(code, KilnError)
    return cls(message, code=code, details=details)


class ReadOnlyWarning(UserWarning):
    """A read-only array was passed where the signature says the kernel may
    write (``T*``, not ``const T*``). The call goes on; declare the argument
    ``const`` if the kernel only reads it."""
