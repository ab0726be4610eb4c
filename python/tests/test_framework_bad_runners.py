"""Runners and tuning specs that misbehave: a wrong type from a runner is
named, a bad DynamicDim or constraint is refused when declared, and a
KeyboardInterrupt raised inside a runner or a map stops choose_one (it used
to be recorded as the tactic's failure and swallowed), and an Exception
raised by a map or a constraint is a ConfigError naming it."""

import numpy as np
import pytest

import kiln


class Double(kiln.Runner):
    def __init__(self, tactics=(0, 1), forward=None, name=None):
        self._tactics, self._forward, self._name = tactics, forward, name

    @property
    def name(self):
        return self._name if self._name is not None else super().name

    def get_valid_tactics(self, inputs, profile):
        return self._tactics

    def forward(self, inputs, tactic=-1, do_preparation=False):
        if self._forward is not None:
            self._forward(tactic, do_preparation)
        x, out = inputs
        out[...] = 2 * x


def inputs():
    x = np.ones((8, 4), np.float32)
    return [x, np.zeros_like(x)]


def test_keyboard_interrupt_in_a_runner_leaves_choose_one():
    def interrupt(tactic, prep):
        raise KeyboardInterrupt

    with kiln.tuning(), pytest.raises(KeyboardInterrupt):
        kiln.choose_one("interrupted_op", [Double(forward=interrupt, name="interrupting")], inputs())


def test_non_int_tactics_fall_back():
    with kiln.tuning():
        runner, tactic = kiln.choose_one("str_tactics_op", [Double(tactics=["a"], name="str_tactics")],
                                         inputs())
    assert tactic == -1


def test_runner_name_must_be_a_str():
    with kiln.tuning(), pytest.raises(kiln.ConfigError, match="has the name 5: a runner's name is a str"):
        kiln.choose_one("named_op", [Double(name=5)], inputs())


def test_bad_specs_are_refused_when_declared():
    with pytest.raises(kiln.ConfigError, match="dim=-1"):
        kiln.DynamicDim(input=0, dim=-1, buckets=(16,))
    with pytest.raises(kiln.ConfigError, match="every bucket is a size of 1 or more"):
        kiln.DynamicDim(input=0, dim=0, buckets=(0, 16))
    dynamic = [kiln.DynamicDim(input=0, dim=0, buckets=(8, 16))]
    with pytest.raises(kiln.ConfigError, match="each is \\(input, dim, f\\(profile\\) -> size\\)"):
        kiln.choose_one("short_constraint_op", [Double(name="short")], inputs(), dynamic=dynamic,
                        constraints=[(1, 0)])
    with kiln.tuning(), pytest.raises(
            kiln.ConfigError,
            match=r"the map of DynamicDim\(input=0, dim=0\) returned 'x': it returns a size"):
        kiln.choose_one("bad_map_op", [Double(name="bad_map")], inputs(),
                        dynamic=[kiln.DynamicDim(input=0, dim=0, buckets=(8, 16), map=lambda s: "x")])


def test_a_map_or_constraint_that_raises_is_named():
    # An Exception from the user's callable is a ConfigError naming the
    # callable and what it was given; the error does not tune or cache.
    dynamic = [kiln.DynamicDim(input=0, dim=0, buckets=(8, 16), map=lambda s: 1 // 0)]
    with kiln.tuning(), pytest.raises(
            kiln.ConfigError,
            match=r"the map of DynamicDim\(input=0, dim=0\) raised ZeroDivisionError: "
                  r"integer division or modulo by zero \(at .*test_framework_bad_runners.py:\d+\) "
                  r"for the size 8"):
        kiln.choose_one("raising_map_op", [Double(name="raising_map")], inputs(), dynamic=dynamic)
    plain = [kiln.DynamicDim(input=0, dim=0, buckets=(8, 16))]
    with kiln.tuning(), pytest.raises(
            kiln.ConfigError,
            match=r"a constraint of choose_one raised KeyError: 'x' \(at .*\) for the profile \("):
        kiln.choose_one("raising_constraint_op", [Double(name="raising_constraint")], inputs(),
                        dynamic=plain, constraints=[(1, 0, lambda p: {}["x"])])


def test_a_keyboard_interrupt_in_a_map_leaves_choose_one():
    def interrupt(size):
        raise KeyboardInterrupt

    dynamic = [kiln.DynamicDim(input=0, dim=0, buckets=(8, 16), map=interrupt)]
    with kiln.tuning(), pytest.raises(KeyboardInterrupt):
        kiln.choose_one("interrupting_map_op", [Double(name="interrupting_map")], inputs(),
                        dynamic=dynamic)


def test_skip_ops_takes_one_op_as_a_string():
    with kiln.tuning(skip_ops="attention"):
        assert kiln.framework._skipped_ops() == ["attention"]


def test_tuning_rank_must_be_a_rank():
    for rank in (-1, "3", 1.5, True):
        with pytest.raises(kiln.ConfigError, match="give this process's rank"):
            with kiln.tuning(rank=rank):
                pass
