"""Threads, fork and spawn: the GIL is released while Kiln works, and a
forked child starts from its own Kiln."""

import multiprocessing as mp
import os
import subprocess
import sys
import threading

import numpy as np

import kiln
from conftest import SAXPY, run_python


def make(name):
    k = kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu", name=name,
                    signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                    grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),))
    return kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (256, 2048)], key=["n"],
                         restore_value=["y"])(k)


def test_many_threads_call_one_tuned_kernel():
    tuned = make("saxpy_threads")
    errors = []

    def work(i):
        try:
            n = 1000 + 500 * (i % 3)  # three keys, tuned concurrently
            x = np.ones(n, dtype=np.float32)
            for _ in range(20):
                y = np.zeros(n, dtype=np.float32)
                tuned(float(i), x, y, n)
                assert (y == float(i)).all()
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert tuned.stats()["misses"] == 3


def test_threads_run_while_kiln_compiles():
    # A Python thread keeps running while another compiles: the GIL is free.
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    kiln.compile(SAXPY + "\n// gil test\n", "saxpy<64>", backend="cpu")
    stop.set()
    t.join()
    assert len(ticks) > 5


def _child_work(q):
    tuned = make("saxpy_spawned")
    x = np.ones(1234, dtype=np.float32)
    y = np.zeros(1234, dtype=np.float32)
    tuned(4.0, x, y, 1234)
    q.put(float(y[0]))


def test_spawned_process():
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child_work, args=(q,))
    p.start()
    p.join(300)
    assert p.exitcode == 0 and q.get(timeout=5) == 4.0


def test_forked_child_after_the_parent_tuned():
    tuned = make("saxpy_forked")
    x = np.ones(2222, dtype=np.float32)
    y = np.zeros(2222, dtype=np.float32)
    tuned(1.0, x, y, 2222)  # the parent's pools, workers and JIT exist now
    compiled = kiln.compile(SAXPY + "\n// fork\n", "saxpy<128>", backend="cpu")
    pid = os.fork()
    if pid == 0:
        try:
            y2 = np.zeros(2222, dtype=np.float32)
            tuned(2.0, x, y2, 2222)  # served from disk by the child's own Kiln
            compiled(3.0, x, y2, 2222, grid=(kiln.cdiv(2222, 128),))
            ok = (y2 == 5.0).all()
            y3 = np.zeros(3333, dtype=np.float32)
            tuned(1.0, np.ones(3333, dtype=np.float32), y3, 3333)  # a new key tunes
            os._exit(0 if ok and (y3 == 1.0).all() else 1)
        except BaseException:
            import traceback
            traceback.print_exc()
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    # The parent is unaffected.
    y4 = np.zeros(2222, dtype=np.float32)
    tuned(1.0, x, y4, 2222)
    assert (y4 == 1.0).all()


# The interpreter exits while a daemon thread is inside a kiln call,
# launching a compiled kernel in a loop. Python 3.11 ends such a thread
# with pthread_exit when it takes the GIL back during finalization, and the
# unwind through Kiln's noexcept frames aborted the process (exit 134).
def test_the_interpreter_exits_cleanly_with_daemon_threads_inside_kiln(tmp_path):
    out = run_python(f"""
import threading, time
import numpy as np, kiln
SPIN = r'''
#include "kiln/cpu_kernel.h"
void spin(const kiln::cpu::BlockContext& ctx, float* y, int n) {{
  for (int r = 0; r < n; ++r) for (int i = 0; i < 1000; ++i) y[i] = y[i] * 0.5f + 1.0f; }}
'''
spin = kiln.compile(SPIN, "spin", backend="cpu")
y = np.zeros(1000, np.float32)
threading.Thread(target=lambda: [spin(y, 20000) for _ in iter(int, 1)], daemon=True).start()
time.sleep(0.5)
print("exiting")
""", str(tmp_path / "cache"), timeout=120)
    assert "exiting" in out


# The interpreter exits while a daemon thread is inside a tuning run whose
# launch rule sleeps: the rule runs on the tuner's threads and on the
# calling thread, and time.sleep lets the GIL go and takes it back inside
# Python's own code, whose unwind at exit met nanobind's catch (...)
# (SIGSEGV). Exiting earlier, while the thread still opened Kiln's runtime
# without the GIL, exit() destroyed statics under it (SIGSEGV in
# find_backend). Each is a race, so the exit comes at several points, and
# the exit status given to sys.exit is kept.
def test_the_interpreter_exits_cleanly_with_a_daemon_thread_tuning(tmp_path):
    code = f"""
import sys, threading, time
import numpy as np, kiln
SAXPY = {SAXPY!r}
def slow_grid(m):
    time.sleep(0.05)
    return (kiln.cdiv(m["n"], m["BLOCK"]),)
k = kiln.Kernel(SAXPY, entry="saxpy<{{BLOCK}}>", backend="cpu", name="daemon_tune",
                signature=["a: f32", "x: f32*", "y: f32*", "n: i32"], grid=slow_grid)
tuned = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (64, 128, 256, 512)],
                      key=["n"], restore_value=["y"])(k)
x = np.ones(5000, np.float32)
def tune_forever():
    n = 5000
    while True:
        tuned(2.0, x[:n], np.zeros(n, np.float32), n)
        n -= 1
threading.Thread(target=tune_forever, daemon=True).start()
time.sleep(float(sys.argv[1]))
print("exiting", flush=True)
sys.exit(int(sys.argv[2]))
"""
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"))
    for exit_after in (0.02, 0.05, 0.1, 0.2, 0.3, 0.5) * 2:
        status = 3 if exit_after == 0.3 else 0
        r = subprocess.run([sys.executable, "-c", code, str(exit_after), str(status)], env=env,
                           capture_output=True, text=True, timeout=120)
        assert (r.returncode, r.stdout) == (status, "exiting\n"), (exit_after, r.stderr)
