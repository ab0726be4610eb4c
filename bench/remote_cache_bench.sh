#!/usr/bin/env bash
# The remote cache tier measured side by side in one run (docs/benchmarks.md):
#  1. one `kiln tune` of a CPU GEMM started three ways, interleaved over
#     ROUNDS rounds: cold (empty cache, no server), warm from the remote
#     tier (empty local cache, a server that holds the entries), warm from
#     local disk;
#  2. 8 processes tuning 8 different problems at once against one server,
#     then 8 fresh processes served by it: lookups per second at the
#     server, and every entry still whole (`kiln cache remote verify`) and
#     none lost (every problem of the second wave served with 0 compiled).
# Usage: bash bench/remote_cache_bench.sh [ROUNDS]   (build/bin/kiln must exist)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
kiln=$PWD/build/bin/kiln
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
  --logfile "$work/redis.log" --daemonize yes --pidfile "$work/redis.pid"
trap 'kill "$(cat "$work/redis.pid")" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
export KILN_REMOTE_CACHE=redis://127.0.0.1:$port KILN_REMOTE_CACHE_TRUST=unsigned
tune=(tune --kernel gemm_f32 --backend cpu --shape M=256,N=256,K=256 --max-configs 16 --json)

now() { date +%s%N; }
# Seeds the server with the entries of this tune, and a disk that holds them.
KILN_CACHE_DIR=$work/seed "$kiln" "${tune[@]}" >/dev/null 2>&1
declare -A total=([cold]=0 [remote]=0 [disk]=0)
for r in $(seq "$rounds"); do
  for way in cold remote disk; do
    case $way in
      cold) dir=$work/cold$r; env=(env -u KILN_REMOTE_CACHE) ;;
      remote) dir=$work/remote$r; env=(env) ;;
      disk) dir=$work/seed; env=(env -u KILN_REMOTE_CACHE) ;;
    esac
    t0=$(now)
    out=$("${env[@]}" KILN_CACHE_DIR="$dir" "$kiln" "${tune[@]}" 2>/dev/null)
    t1=$(now)
    compiled=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["stats"]["compiled"])' "$out")
    total[$way]=$((total[$way] + t1 - t0))
    [[ $way == cold || $compiled == 0 ]] || { echo "$way compiled $compiled"; exit 1; }
  done
done
ms() { python3 -c "print(f'{$1 / $rounds / 1e6:.1f}')"; }
echo "warm start of one tune (gemm_f32 256^3, 16 configs), mean of $rounds interleaved rounds:"
echo "  cold compile + tune   $(ms "${total[cold]}") ms"
echo "  served by the remote  $(ms "${total[remote]}") ms   ($(python3 -c "print(f'{${total[cold]}/${total[remote]}:.1f}')")x faster than cold)"
echo "  served by local disk  $(ms "${total[disk]}") ms   (remote/disk $(python3 -c "print(f'{${total[remote]}/${total[disk]}:.2f}')")x)"

# 8 writers, then 8 readers, each on its own problem.
redis-cli -p "$port" flushall >/dev/null
shapes=(32 40 48 56 64 72 80 88)
for i in "${!shapes[@]}"; do
  s=${shapes[$i]}
  KILN_CACHE_DIR=$work/w$i "$kiln" tune --kernel gemm_f32 --backend cpu \
    --shape M=$s,N=$s,K=$s --max-configs 8 --json >/dev/null 2>&1 &
done
wait
before=$(redis-cli -p "$port" info stats | tr -d '\r' | awk -F: '/^(keyspace_hits|keyspace_misses):/{n+=$2} END{print n}')
t0=$(now)
served=0
for i in "${!shapes[@]}"; do
  s=${shapes[$i]}
  (KILN_CACHE_DIR=$work/r$i "$kiln" tune --kernel gemm_f32 --backend cpu \
     --shape M=$s,N=$s,K=$s --max-configs 8 --json 2>/dev/null >"$work/r$i.json") &
done
wait
t1=$(now)
after=$(redis-cli -p "$port" info stats | tr -d '\r' | awk -F: '/^(keyspace_hits|keyspace_misses):/{n+=$2} END{print n}')
for i in "${!shapes[@]}"; do
  c=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stats"]["compiled"])' "$work/r$i.json")
  [[ $c == 0 ]] && served=$((served + 1))
done
verify=$("$kiln" cache remote verify --json)
entries=$(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print(j["count"], j["broken"])' "$verify")
lookups=$((after - before))
echo "8 processes, 8 problems, one server:"
echo "  second wave: $served/8 problems served with 0 compiled; $lookups lookups in $(python3 -c "print(f'{($t1-$t0)/1e6:.0f}')") ms" \
  "= $(python3 -c "print(f'{$lookups/(($t1-$t0)/1e9):.0f}')") lookups/s (whole processes, start to exit)"
echo "  entries on the server, broken: $entries"

# Lookups per second at the server from 8 processes reading at once (each
# `verify` reads and checks every entry), and the entries still whole.
hits() { redis-cli -p "$port" info stats | tr -d '\r' | awk -F: '/^keyspace_hits:/{print $2}'; }
before=$(hits)
t0=$(now)
for i in $(seq 8); do
  (for _ in $(seq 20); do "$kiln" cache remote verify >/dev/null; done) &
done
wait
t1=$(now)
reads=$(($(hits) - before))
echo "  8 processes verifying at once: $reads checked reads in $(python3 -c "print(f'{($t1-$t0)/1e6:.0f}')") ms" \
  "= $(python3 -c "print(f'{$reads/(($t1-$t0)/1e9):.0f}')") lookups/s; afterwards: $("$kiln" cache remote verify | tail -1)"
