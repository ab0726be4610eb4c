#!/usr/bin/env bash
# The default strategy on recorded spaces it was not tuned on
# (docs/lab/search-hub-journal.md, "Beyond the three shared files"): every
# Kernel Tuner cache file under DIR (e.g. a clone of the AutoTuningAssociation
# benchmark_hub: cachefiles/*/ and currently_unused/cachefiles/*/, KTT's
# output files included), hybrid against random, 25 seeds, the best-so-far
# fraction of each file's optimum at 0.5, 1 and 2% of its configs. Files
# Kiln cannot read are listed and skipped, not fatal.
# Usage: bash bench/search_generalisation.sh DIR [SEEDS] [FRACTION]
#        (build/bin/kiln-lab must exist)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bash bench/search_generalisation.sh DIR [SEEDS] [FRACTION]}
seeds=${2:-25}
fraction=${3:-0.02}
kiln=$PWD/build/bin/kiln-lab
[ -x "$kiln" ] || { echo "build/bin/kiln-lab is missing: build first (cmake --build build)" >&2; exit 2; }
[ -d "$dir" ] || { echo "no directory $dir: give a folder of Kernel Tuner cache files" >&2; exit 2; }

printf '%-48s %-7s %s\n' file strategy "medians at 0.5%, 1%, 2%, 5%, 10% up to $fraction [q1 at the last]"
find "$dir" -name '*.json.gz' -o -name '*.json' | grep -v '_T4\.' | sort | while read -r f; do
  if ! out=$("$kiln" bench search --recorded "$f" --strategy hybrid --strategy random \
    --seeds "$seeds" --budget-fraction "$fraction" --json 2>&1); then
    printf '%-48s skipped: %s\n' "${f#"$dir"/}" "$(echo "$out" | tail -1 | cut -c1-80)"
    continue
  fi
  echo "$out" | python3 -c '
import json, sys
name = sys.argv[1]
for e in json.load(sys.stdin):
    for s, points in e["strategies"].items():
        print("%-48s %-7s %s [%.3f]" % (name[-48:], s, " ".join("%.3f" % p["median"] for p in points), points[-1]["q1"]))
' "${f#"$dir"/}"
done
