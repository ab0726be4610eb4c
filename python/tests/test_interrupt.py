"""Ctrl-C (a real SIGINT, to a real child) while kiln.autotune tunes: the
run stops at the tuner's next check (about every 50 ms while it waits on
its workers), the caller gets KeyboardInterrupt, and nothing is saved.
Before, the run went on to its end (64 configs of at least 0.4 s here),
saved its winner, and the first Python call after it met the pending
signal and raised SystemError."""

import os
import signal
import subprocess
import sys
import textwrap
import time

CHILD = textwrap.dedent(r'''
    import time
    import numpy as np, kiln
    SLOW = r"""
    #include "kiln/cpu_kernel.h"
    #include <unistd.h>
    template <int V>
    void slow(const kiln::cpu::BlockContext& ctx, float* y, int n) {
      usleep(100000);
      if (ctx.block_idx.x == 0) y[0] = V;
    }
    """
    k = kiln.Kernel(SLOW, entry="slow<{V}>", backend="cpu", signature=["y: f32*", "n: i32"], grid=(1,))
    t = kiln.autotune(configs=[kiln.Config(V=v) for v in range(64)], key=["n"], rep=1, warmup=1,
                      check=False)(k)
    print("tuning", flush=True)
    try:
        t(np.zeros(4, np.float32), 4)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    # The interpreter goes on as usual after it.
    print(sum(range(4)), flush=True)
''')


def interrupted_child(env, after_s):
    """The child, sent SIGINT `after_s` seconds into its tuning."""
    child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             # A test runner may start us with SIGINT ignored.
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert child.stdout.readline().strip() == "tuning"
    time.sleep(after_s)
    child.send_signal(signal.SIGINT)
    return child


def test_sigint_during_tuning_stops_it_and_raises_keyboard_interrupt(tmp_path):
    child = interrupted_child(dict(os.environ, KILN_CACHE_DIR=str(tmp_path)), 1.0)
    sent = time.monotonic()
    out, err = child.communicate(timeout=300)
    waited = time.monotonic() - sent
    assert "SystemError" not in err, err
    assert out.split() == ["interrupted", "6"], (out, err)
    # Not a timing of Kiln's speed: the whole run sleeps for at least 25 s
    # (64 configs x 4 runs x 0.1 s, whatever the machine), while an
    # interrupted one waits only for the config being measured and the
    # compile in flight.
    assert waited < 20, f"the run went on for {waited:.0f} s after Ctrl-C"
    tuning = tmp_path / "tuning" / "tuning.json"
    assert not tuning.exists() or "slow" not in tuning.read_text(), "an interrupted run was saved"


def test_an_interrupted_run_still_logs_what_it_measured(tmp_path):
    """KILN_AUTOTUNE_LOG keeps the measurements of a run cut short by Ctrl-C
    (marked "interrupted"), and KILN_PRINT_AUTOTUNING says nothing was saved."""
    import json

    log = tmp_path / "tune.jsonl"
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"), KILN_AUTOTUNE_LOG=str(log),
               KILN_PRINT_AUTOTUNING="1")
    # Long enough for a few of the 0.4 s configs to finish on a slow machine.
    child = interrupted_child(env, 4.0)
    out, err = child.communicate(timeout=300)
    assert out.split() == ["interrupted", "6"], (out, err)
    assert "interrupted after" in err and "no winner saved" in err, err
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines, "the interrupted run logged nothing"
    assert all(line["interrupted"] and not line["winner"] for line in lines), lines
    assert any(line["status"] == "ok" for line in lines), lines
