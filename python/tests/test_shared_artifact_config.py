"""Two kernels with the same source and entry share compiled code in the
artifact cache; each one's tuning must still measure, report and save its
own configs (the cached entry's config was once served as the winner, so a
kernel could be handed a config outside its space)."""

import numpy as np

import kiln
from conftest import SAXPY

SIG = ["a: f32", "x: f32*", "y: f32*", "n: i32"]


def kernel(name):
    return kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu", signature=SIG, name=name,
                       grid=lambda m: (kiln.cdiv(m["n"], m["BLOCK"]),))


def test_winner_is_a_config_of_the_kernels_own_space():
    x = np.ones(4096, np.float32)
    y = np.zeros_like(x)
    # TAG is in no pattern: its configs compile to the same code as BLOCK's.
    first = kiln.autotune(configs=[kiln.Config(BLOCK=256, TAG=1), kiln.Config(BLOCK=512, TAG=2)],
                          key=["n"], check=False)(kernel("shared_code_first"))
    first(1.0, x, y, x.size)
    second = kiln.autotune(configs=[kiln.Config(BLOCK=256)], key=["n"], check=False)(
        kernel("shared_code_second"))
    second(1.0, x, y, x.size)
    assert second.best_config == kiln.Config(BLOCK=256)
    assert [m["config"] for m in second.measurements()] == [kiln.Config(BLOCK=256)]
