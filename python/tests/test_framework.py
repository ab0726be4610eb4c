"""The framework tuning API: runners, choose_one with dynamic shapes, the
tuning scope with its cache file, skip scopes."""

import threading

import numpy as np
import pytest

import kiln
from conftest import run_python


class Scale(kiln.Runner):
    """out = 2 * x; tactic t sleeps less for larger t, so 3 wins."""

    version = "1"

    def __init__(self):
        self.calls = []

    def get_valid_tactics(self, inputs, profile):
        return [0, 1, 2, 3]

    def forward(self, inputs, tactic=-1, do_preparation=False):
        if do_preparation:
            return
        self.calls.append(tactic)
        x, out = inputs
        out[...] = 2 * x
        # Slower tactics do more work.
        for _ in range(4 - max(tactic, 0)):
            np.sum(x * x)


def test_fallback_outside_tuning_then_tuned_inside():
    r = Scale()
    x = np.ones((8, 64), dtype=np.float32)
    out = np.zeros_like(x)
    dyn = [kiln.DynamicDim(input=0, dim=0, buckets=(8, 64, 512))]
    cons = [(1, 0, lambda p: p[0])]
    runner, tactic = kiln.choose_one("scale_op", [r], [x, out], dynamic=dyn, constraints=cons)
    assert runner is r and tactic == -1
    with kiln.tuning():
        runner, tactic = kiln.choose_one("scale_op", [r], [x, out], dynamic=dyn, constraints=cons)
    assert runner is r and tactic in (0, 1, 2, 3)
    # A size in the same bucket is served from memory, tuning off.
    x2 = np.ones((40, 64), dtype=np.float32)
    runner2, tactic2 = kiln.choose_one("scale_op", [r], [x2, np.zeros_like(x2)], dynamic=dyn,
                                       constraints=cons)
    assert (runner2, tactic2) == (runner, tactic) or tactic2 in (0, 1, 2, 3)
    assert kiln.framework.choose_one_source("scale_op", [r], [x2, np.zeros_like(x2)],
                                            dynamic=dyn, constraints=cons) == "memory"


def test_skip_scopes_nest_and_restore_per_thread():
    r = Scale()
    x = np.ones((4, 4), dtype=np.float32)
    with kiln.tuning(skip_ops={"a"}):
        with kiln.tuning(skip_ops={"b"}):
            assert set(kiln.framework._skipped_ops()) == {"a", "b"}
            seen = []
            t = threading.Thread(target=lambda: seen.append(kiln.framework._skipped_ops()))
            t.start()
            t.join()
            assert seen == [[]]  # another thread's scopes never leak in
            assert kiln.choose_one("a", [r], [x, np.zeros_like(x)]) == (r, -1)
            assert kiln.framework.choose_one_source("b", [r], [x, np.zeros_like(x)]) == "skipped"
        assert kiln.framework._skipped_ops() == ["a"]
    assert kiln.framework._skipped_ops() == []
    assert not kiln.framework._tuning_on()


def test_tuning_cache_file_serves_a_new_process(tmp_path):
    path = tmp_path / "tuning.json"
    code = """
        import numpy as np, kiln
        class R(kiln.Runner):
            name = "file_runner"
            def get_valid_tactics(self, inputs, profile): return [5, 6]
            def forward(self, inputs, tactic=-1, do_preparation=False):
                inputs[1][...] = inputs[0] + (0 if tactic != 6 else 0)
        r = R()
        x = np.ones((16, 8), dtype=np.float32)
        dyn = [kiln.DynamicDim(0, 0, (16, 128))]
        with kiln.tuning(tune=%s, cache=%r):
            choice = kiln.choose_one("file_op", [r], [x, np.zeros_like(x)], dynamic=dyn,
                                     constraints=[(1, 0, lambda p: p[0])])
            src = kiln.framework.choose_one_source("file_op", [r], [x, np.zeros_like(x)],
                                                   dynamic=dyn, constraints=[(1, 0, lambda p: p[0])])
        print("tactic", choice[1], "source", src)
    """
    first = run_python(code % (True, str(path)))
    assert "tactic 5" in first or "tactic 6" in first, first
    assert path.exists() or list(tmp_path.glob("tuning*.json")), list(tmp_path.iterdir())
    second = run_python(code % (False, str(path)))
    assert first.split("source")[0] == second.split("source")[0], (first, second)
    assert "source memory" in second or "source disk" in second, second


def test_a_raising_runner_never_wins():
    class Bad(kiln.Runner):
        def get_valid_tactics(self, inputs, profile):
            return [0]

        def forward(self, inputs, tactic=-1, do_preparation=False):
            if tactic >= 0:
                raise RuntimeError("tactic 0 is broken")
            inputs[1][...] = inputs[0]

    b = Bad()
    x = np.ones((4, 4), dtype=np.float32)
    with kiln.tuning():
        runner, tactic = kiln.choose_one("bad_op", [b], [x, np.zeros_like(x)])
    assert runner is b and tactic == -1


def test_choose_one_refuses_non_runners():
    with pytest.raises(kiln.ConfigError, match="not a runner"):
        kiln.choose_one("x", [object()], [np.zeros(1, dtype=np.float32)])
