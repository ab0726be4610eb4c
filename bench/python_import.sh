#!/usr/bin/env bash
# `python -c "import kiln"` against `python -c pass`, interleaved, medians of
# N runs each (default 30), with the venv scripts/setup.sh makes and the
# package installed in it (pip install .).
#   bash bench/python_import.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-30}
py=.venv/bin/python
"$py" - "$n" <<'PY'
import statistics, subprocess, sys, time
n = int(sys.argv[1])
py = sys.executable
cmds = {"pass": [py, "-c", "pass"], "import kiln": [py, "-c", "import kiln"]}
t = {k: [] for k in cmds}
for i in range(n):
    for k in (cmds if i % 2 == 0 else reversed(list(cmds))):
        t0 = time.perf_counter()
        subprocess.run(cmds[k], check=True)
        t[k].append(time.perf_counter() - t0)
m = {k: statistics.median(v) * 1e3 for k, v in t.items()}
for k, v in m.items():
    print(f"{k:12s} {v:7.1f} ms (median of {n})")
print(f"import kiln adds {m['import kiln'] - m['pass']:.1f} ms ({m['import kiln'] / m['pass']:.2f}x python -c pass)")
PY
