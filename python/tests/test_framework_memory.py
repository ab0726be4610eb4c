"""choose_one keeps nothing of a call alive: a runner the caller drops is
freed, and the specs built for dynamic shapes are bounded, keyed by the
callables themselves (an id() is reused once its object dies)."""

import gc
import weakref

import numpy as np

import kiln


class Big(kiln.Runner):
    """A runner holding 1 MiB, as a runner holding weights would."""

    name = "memory_big_runner"

    def __init__(self):
        self.weights = np.zeros(1 << 20, dtype=np.uint8)

    def forward(self, inputs, tactic=-1, do_preparation=False):
        inputs[1][...] = inputs[0]


def inputs():
    x = np.ones((8, 4), dtype=np.float32)
    return [x, np.zeros_like(x)]


# Every runner ever passed was kept for the process's life (300 calls with
# a fresh 1 MiB runner reached 330 MB).
def test_a_dropped_runner_is_freed():
    refs = []
    for _ in range(3):
        r = Big()
        refs.append(weakref.ref(r))
        assert kiln.choose_one("memory_op", [r], inputs())[0] is r
        del r
    gc.collect()
    assert [ref() for ref in refs] == [None, None, None]


# A fresh map per call: each built a spec kept forever, with its map.
def test_specs_of_fresh_callables_are_bounded_and_let_go():
    first = lambda size: size  # noqa: E731
    ref = weakref.ref(first)
    r = Big()
    dyn = [kiln.DynamicDim(0, 0, (8, 64), map=first)]
    kiln.choose_one("memory_map_op", [r], inputs(), dynamic=dyn)
    del first, dyn
    for _ in range(300):
        kiln.choose_one("memory_map_op", [r], inputs(),
                        dynamic=[kiln.DynamicDim(0, 0, (8, 64), map=lambda size: size)])
    gc.collect()
    assert ref() is None
    assert len(kiln.framework._specs) < 300
