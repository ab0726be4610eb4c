"""Ctrl-C (a real SIGINT, to a real child) while kiln.autotune tunes: the
caller gets KeyboardInterrupt. The first Python call after the tuner
returned used to meet the pending signal and raise SystemError."""

import os
import signal
import subprocess
import sys
import textwrap
import time

CHILD = textwrap.dedent(r'''
    import numpy as np, kiln
    SLOW = r"""
    #include "kiln/cpu_kernel.h"
    #include <unistd.h>
    template <int V>
    void slow(const kiln::cpu::BlockContext& ctx, float* y, int n) {
      usleep(20000);
      if (ctx.block_idx.x == 0) y[0] = V;
    }
    """
    k = kiln.Kernel(SLOW, entry="slow<{V}>", backend="cpu", signature=["y: f32*", "n: i32"], grid=(1,))
    t = kiln.autotune(configs=[kiln.Config(V=v) for v in range(16)], key=["n"], rep=250, warmup=1,
                      check=False)(k)
    print("tuning", flush=True)
    try:
        t(np.zeros(4, np.float32), 4)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
''')


def test_sigint_during_tuning_raises_keyboard_interrupt(fresh_cache):
    env = dict(os.environ, KILN_CACHE_DIR=fresh_cache)
    child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             # A test runner may start us with SIGINT ignored.
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert child.stdout.readline().strip() == "tuning"
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=300)
    assert "SystemError" not in err, err
    assert out.strip() == "interrupted", (out, err)
