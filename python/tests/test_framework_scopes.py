"""kiln.tuning() blocks belong to the thread or asyncio task that entered
them: their skip set and switch are seen there only, whatever order tasks
leave them in, and each block's decisions go to its own cache file."""

import asyncio
import threading

import numpy as np

import kiln


class Named(kiln.Runner):
    """Copies x to out; two tactics, so a tuning pass has something to pick."""

    def __init__(self, name):
        self._name = name

    @property
    def name(self):
        return self._name

    def get_valid_tactics(self, inputs, profile):
        return [0, 1]

    def forward(self, inputs, tactic=-1, do_preparation=False):
        if not do_preparation:
            inputs[1][...] = inputs[0]


def inputs():
    x = np.ones((4, 4), dtype=np.float32)
    return [x, np.zeros_like(x)]


def source(op):
    return kiln.framework.choose_one_source(op, [Named("scopes_runner")], inputs())


# Task a enters its block, then task b enters its own, then a leaves first.
# Scopes kept as one per-thread stack restored in order gave b no skip set
# of its own after a left, and left a's set in force for the process.
def test_asyncio_tasks_leaving_their_blocks_out_of_order():
    seen = {}

    async def main():
        a_in, b_in, a_out = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def task_a():
            with kiln.tuning(skip_ops={"task_a_op"}):
                a_in.set()
                await b_in.wait()
                seen["a"] = (source("task_a_op"), source("task_b_op"))
            a_out.set()

        async def task_b():
            await a_in.wait()
            with kiln.tuning(skip_ops={"task_b_op"}):
                b_in.set()
                await a_out.wait()
                seen["b"] = (source("task_a_op"), source("task_b_op"))

        await asyncio.gather(task_a(), task_b())

    asyncio.run(main())
    assert seen["a"][0] == "skipped" and seen["a"][1] != "skipped", seen
    assert seen["b"][0] != "skipped" and seen["b"][1] == "skipped", seen
    assert source("task_a_op") != "skipped" and source("task_b_op") != "skipped"
    assert kiln.framework._skipped_ops() == [] and not kiln.framework._tuning_on()


# Two threads, each in a block with its own file, both blocks open while
# each tunes: each thread's decision lands in its own file. (Both went to
# the file opened last.)
def test_each_threads_decisions_go_to_its_own_blocks_file(tmp_path):
    a_open, b_open, a_tuned = threading.Event(), threading.Event(), threading.Event()
    errors = []

    def thread_a():
        try:
            with kiln.tuning(cache=str(tmp_path / "a.json"), rank=0):
                a_open.set()
                b_open.wait(30)  # b's file is now the newest
                kiln.choose_one("thread_a_op", [Named("thread_a_runner")], inputs())
        except Exception as e:  # reported below
            errors.append(e)
        finally:
            a_open.set()
            a_tuned.set()

    def thread_b():
        try:
            a_open.wait(30)
            with kiln.tuning(cache=str(tmp_path / "b.json"), rank=0):
                b_open.set()
                kiln.choose_one("thread_b_op", [Named("thread_b_runner")], inputs())
                a_tuned.wait(30)  # b's block outlives a's tuning
        except Exception as e:  # reported below
            errors.append(e)
        finally:
            b_open.set()

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    text_a = (tmp_path / "a.rank0.json").read_text()
    text_b = (tmp_path / "b.rank0.json").read_text()
    assert "thread_a_op" in text_a and "thread_b_op" not in text_a, text_a
    assert "thread_b_op" in text_b and "thread_a_op" not in text_b, text_b
