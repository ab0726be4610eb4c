#!/usr/bin/env bash
# Process wall time of kiln's light commands against a bare C++ main built
# the same way (bench/bare_main.cpp), interleaved rounds, medians and
# ratios: `kiln --help`, `kiln info --no-toolchain` (no backend loaded),
# `kiln info` (loads the CPU backend plugin and its LLVM, for reference),
# and a warm `kiln tune` (the winner served from the tuning cache, in a
# cache the script fills first). BASELINE=path/to/another/kiln adds that
# binary's `--help` and warm tune (an older build, for before and after).
#   cmake --build build -j2 --target kiln_cli kiln_bench_bare_main kiln_cpu_plugin
#   bash bench/cli_startup.sh [ROUNDS=31]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-31}
kiln=${KILN:-build/bin/kiln}
bare=${BARE:-build/bin/kiln_bench_bare_main}
base=${BASELINE:-}
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
tune=(tune --kernel gemm_f32_tiled --backend cpu --shape M=256,N=256,K=256)
# The cold tunes that fill the caches (not timed): the baseline its own, as
# another build's codegen hash makes it retune what this kiln stored.
KILN_CACHE_DIR=$cache/kiln "$kiln" "${tune[@]}" >/dev/null
if [ -n "$base" ]; then KILN_CACHE_DIR=$cache/base "$base" "${tune[@]}" >/dev/null; fi
python3 - "$rounds" "$kiln" "$bare" "$cache" "$base" "${tune[@]}" <<'PY'
import os, statistics, subprocess, sys, time
rounds, kiln, bare, cache, base = int(sys.argv[1]), *sys.argv[2:6]
tune = sys.argv[6:]
env = dict(os.environ, KILN_CACHE_DIR=cache + "/kiln")
base_env = dict(os.environ, KILN_CACHE_DIR=cache + "/base")
cmds = {
    "bare C++ main": [bare],
    "kiln --help": [kiln, "--help"],
    "kiln info --no-toolchain": [kiln, "info", "--no-toolchain"],
    "kiln info": [kiln, "info"],
    "kiln tune (warm)": [kiln] + tune,
}
if base:
    cmds["baseline kiln --help"] = [base, "--help"]
    cmds["baseline kiln tune (warm)"] = [base] + tune
t = {k: [] for k in cmds}
names = list(cmds)
for i in range(rounds):
    order = names if i % 2 == 0 else list(reversed(names))
    for k in order:
        t0 = time.perf_counter()
        subprocess.run(cmds[k], check=True, env=base_env if k.startswith("baseline") else env,
                       stdout=subprocess.DEVNULL)
        t[k].append(time.perf_counter() - t0)
m = {k: statistics.median(v) * 1e3 for k, v in t.items()}
floor = m["bare C++ main"]
print(f"{'command':28s} {'median':>9s}  {'x bare':>7s}   ({rounds} interleaved rounds)")
for k, v in m.items():
    print(f"{k:28s} {v:7.2f} ms  {v / floor:6.2f}x")
if base:
    print(f"kiln --help against the baseline's: {m['kiln --help'] / m['baseline kiln --help']:.2f}x")
    print(f"warm tune against the baseline's:   "
          f"{m['kiln tune (warm)'] / m['baseline kiln tune (warm)']:.2f}x")
PY
