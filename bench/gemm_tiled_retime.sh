#!/usr/bin/env bash
# Winners of cold tunes of the 60-config CPU GEMM space (gemm_f32_tiled,
# bench/kernel_tuner_compare.sh), timed again side by side, apart from the
# runs that chose them: one `kiln tune` of a space holding only the given
# configs, early stop off, each config timed for TARGET_S seconds of kernel
# time (its median printed), ROUNDS runs. Whether a faster tune chose a
# slower winner is read here, not from the tunes' own numbers.
#   ROUNDS=3 SIZE=512 bash bench/gemm_tiled_retime.sh BM,BN,BK BM,BN,BK ...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kiln=${KILN:-$root/build/bin/kiln}
size=${SIZE:-512}
[ $# -ge 1 ] || { echo "usage: $0 BM,BN,BK [BM,BN,BK ...]" >&2; exit 2; }
spec=$(mktemp --suffix=.json)
python3 - "$spec" "$@" <<'PY'
import json, sys
tuples = [tuple(int(v) for v in t.split(",")) for t in sys.argv[2:]]
values = lambda i: sorted({t[i] for t in tuples})
only = " || ".join(f"(BM == {m} && BN == {n} && BK == {k})" for m, n, k in tuples)
spec = {
    "name": "gemm_f32_tiled_retime", "backend": "cpu",
    "space": {"parameters": [{"name": p, "values": values(i)} for i, p in enumerate(("BM", "BN", "BK"))],
              "constraints": [only],
              "default": dict(zip(("BM", "BN", "BK"), tuples[0]))},
    "launch": {"grid": ["ceil_div(N, BN)", "ceil_div(M, BM)", 1]},
    "args": [{"name": "a", "dtype": "f32", "shape": ["M", "K"], "role": "input", "init": "random"},
             {"name": "b", "dtype": "f32", "shape": ["K", "N"], "role": "input", "init": "random"},
             {"name": "c", "dtype": "f32", "shape": ["M", "N"], "role": "output", "init": "zeros"},
             {"name": "m", "type": "i32", "value": "M"}, {"name": "n", "type": "i32", "value": "N"},
             {"name": "k", "type": "i32", "value": "K"}],
    "reference": "default_config"}
json.dump(spec, open(sys.argv[1], "w"))
PY
echo "# M=N=K=$size, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); medians in ms"
for r in $(seq 1 "${ROUNDS:-3}"); do
  cache=$(mktemp -d)
  out=$(KILN_CACHE_DIR=$cache "$kiln" tune --template "$root/templates/cpu/gemm_f32_tiled.cpp" \
        --space "$spec" --entry 'kiln_cpu::gemm_f32_tiled<{BM},{BN},{BK}>' \
        --shape "M=$size,N=$size,K=$size" --early-stop 0 --finalists 0 \
        --target-s "${TARGET_S:-0.3}" --json)
  rm -rf "$cache"
  python3 -c '
import json, sys
r = json.loads(sys.argv[2])
cells = sorted((m["config"]["BM"], m["config"]["BN"], m["config"]["BK"], m["median_s"] * 1e3)
               for m in r["configs"] if m.get("median_s"))
print(sys.argv[1], " ".join(f"{m},{n},{k}:{t:.3f}" for m, n, k, t in cells))' "$r" "$out"
done
rm -f "$spec"
