#!/usr/bin/env bash
# The steered search's own cost on a space larger than the 16,384 configs a
# pick scores: two kiln-lab binaries (before and after a change), interleaved,
# each replaying hybrid (gp after its opening) on FILE to N configs for one seed (the configs curve and
# the time curve, as `kiln-lab bench search` does), wall time and peak memory.
#   bash bench/search_cost_large.sh OLD_KILN_LAB NEW_KILN_LAB FILE [N] [ROUNDS]
set -euo pipefail
old=$1 new=$2 file=$3 n=${4:-600} rounds=${5:-1}
for ((r = 1; r <= rounds; ++r)); do
  for bin in "$old" "$new"; do
    /usr/bin/time -f "$bin: %e s, %M KB peak" "$bin" bench search --recorded "$file" \
      --strategy hybrid --seeds 1 --max-configs "$n" --json >/dev/null
  done
done
