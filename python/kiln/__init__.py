"""Kiln: JIT kernel generation with an integrated autotuner.

``kiln.compile`` turns source text into a launchable, cached kernel;
``kiln.Kernel`` + ``kiln.autotune`` tune a kernel template over its configs
(Triton's ``@autotune``); ``kiln.Runner``, ``kiln.choose_one`` and
``kiln.tuning`` are the framework tuning API (FlashInfer's, TensorRT-LLM's).
Importing kiln loads no compiler and no driver: a backend loads on first use.
See docs/python.md.
"""

from .config import Config, cdiv
from .errors import (
    ArgumentError,
    CompileError,
    ConfigError,
    KilnError,
    LaunchError,
    NoValidConfigError,
    ReadOnlyWarning,
    UnavailableError,
)
from .kernel import CompiledKernel, Kernel, compile
from .autotune import Autotuned, autotune
from .framework import DynamicDim, Runner, choose_one, power_of_two_buckets, tuning
from .distributed import set_collective

__all__ = [
    "Config",
    "cdiv",
    "KilnError",
    "CompileError",
    "LaunchError",
    "ConfigError",
    "ArgumentError",
    "NoValidConfigError",
    "UnavailableError",
    "ReadOnlyWarning",
    "compile",
    "CompiledKernel",
    "Kernel",
    "autotune",
    "Autotuned",
    "Runner",
    "DynamicDim",
    "power_of_two_buckets",
    "choose_one",
    "tuning",
    "set_collective",
]
