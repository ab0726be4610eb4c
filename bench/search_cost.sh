#!/usr/bin/env bash
# The search's own CPU: what the steered strategies cost to decide, apart
# from the kernels they choose (docs/lab/search-cost-journal.md, "The
# search's own cost"). Each strategy replays one seed of a recorded space
# to a fixed number of configs under every binary given, interleaved,
# ROUNDS times, so binaries built from two commits are timed side by side in one run.
# The replay's compile and benchmark times are simulated: wall and user
# time here are the search's decisions and the replay's bookkeeping.
#   bash bench/search_cost.sh [KILN_BINARY ...]
# Settings from the environment (defaults in brackets):
#   FILE [../shared/recorded-spaces/dedispersion_A100.json.gz]  CONFIGS [512]
#   STRATEGIES ["hybrid"]  ROUNDS [2]
# Prints one line per run: strategy, binary, wall s, user s, peak memory.
set -euo pipefail
cd "$(dirname "$0")/.."
file=${FILE:-../shared/recorded-spaces/dedispersion_A100.json.gz}
configs=${CONFIGS:-512}
strategies=${STRATEGIES:-hybrid}
rounds=${ROUNDS:-2}
binaries=("$@")
((${#binaries[@]})) || binaries=(build/bin/kiln-lab)
for b in "${binaries[@]}"; do
  if [[ ! -x $b ]]; then
    echo "search_cost.sh: '$b' is not an executable kiln-lab; build it (cmake --build build" \
      "--target kiln_lab_cli) or name one" >&2
    exit 2
  fi
done
if [[ ! -f $file ]]; then
  echo "search_cost.sh: no recorded space at '$file'; set FILE to one" \
    "(../shared/recorded-spaces/README.md)" >&2
  exit 2
fi
for ((r = 1; r <= rounds; ++r)); do
  for s in $strategies; do
    for b in "${binaries[@]}"; do
      /usr/bin/time -f "$s $b %e s wall, %U s user, %M KB peak" "$b" bench search \
        --recorded "$file" --strategy "$s" --seeds 1 --max-configs "$configs" >/dev/null
    done
  done
done
