#!/usr/bin/env bash
# A warm start in a new process: Kiln's warm `kiln tune` of the 60-config
# CPU GEMM space (gemm_f32_tiled, served from the tuning and artifact
# caches: the stored shared object dlopen'ed, no LLVM loaded) against Kernel
# Tuner's warm start on the same template and configs (its cache file, every
# config read back; bench/kernel_tuner_gemm.py CACHE). Both caches are
# filled by one cold run each first (not timed); then ROUNDS interleaved
# rounds (the order alternating), process wall time, medians and the ratio.
#   bench/warm_compare.sh [SIZE=512] [ROUNDS=11] [THREADS=2]
# Kernel Tuner 1.5.0 goes into a venv under build/ (PyPI), made on first use.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=${1:-512}
rounds=${2:-11}
threads=${3:-2}
kiln=${KILN:-$root/build/bin/kiln}
. "$root/bench/kt_venv.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tune=(tune --kernel gemm_f32_tiled --backend cpu --shape "M=$size,N=$size,K=$size")
KILN_CACHE_DIR=$work/kiln "$kiln" "${tune[@]}" >/dev/null
(cd "$work" && "$venv/bin/python" "$root/bench/kernel_tuner_gemm.py" "$size" "$threads" \
   "$work/kt_cache.json" >/dev/null 2>&1)
echo "# M=N=K=$size, $threads threads, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$rounds" "$work" "$venv/bin/python" "$root/bench/kernel_tuner_gemm.py" "$size" \
  "$threads" "$kiln" "${tune[@]}" <<'PY'
import os, statistics, subprocess, sys, time
rounds, work, py, script, size, threads, kiln = sys.argv[1:8]
tune = sys.argv[8:]
cmds = {
    "kiln tune (warm)": ([kiln] + tune, dict(os.environ, KILN_CACHE_DIR=work + "/kiln")),
    "kernel_tuner (warm)": ([py, script, size, threads, work + "/kt_cache.json"], dict(os.environ)),
}
t = {k: [] for k in cmds}
kt_call = []  # Kernel Tuner's tune_kernel call alone, as its script times it
names = list(cmds)
for i in range(int(rounds)):
    for k in (names if i % 2 == 0 else list(reversed(names))):
        argv, env = cmds[k]
        t0 = time.perf_counter()
        out = subprocess.run(argv, env=env, cwd=work, check=True, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
        t[k].append(time.perf_counter() - t0)
        if k.startswith("kernel_tuner"):
            import json
            kt_call.append(json.loads(out.strip().splitlines()[-1])["tune_kernel_seconds"])
m = {k: statistics.median(v) * 1e3 for k, v in t.items()}
for k, v in m.items():
    print(f"{k:22s} median {v:8.1f} ms  (min {min(t[k]) * 1e3:.1f}, max {max(t[k]) * 1e3:.1f}, {rounds} rounds)")
print(f"kiln / kernel_tuner: {m['kiln tune (warm)'] / m['kernel_tuner (warm)']:.3f}x")
call = statistics.median(kt_call) * 1e3
print(f"kernel_tuner's tune_kernel call alone (no interpreter start, no imports): median {call:.1f} ms;"
      f" kiln's whole process / that: {m['kiln tune (warm)'] / call:.3f}x")
PY
