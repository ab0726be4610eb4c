#!/usr/bin/env python3
"""Checks that Kernel Tuner's two layouts of the same measurements replay
alike: for each T4 output file (NAME_T4.json.gz) in T4_DIR whose cache-layout
twin (NAME.json.gz) is in CACHE_DIR, runs `kiln-lab bench search` on both with
the same strategies and seeds and compares every seed's best-so-far curve.

    python3 bench/recorded_layouts_agree.py T4_DIR CACHE_DIR [--kiln build/bin/kiln-lab]
        [--seeds 2] [--max-configs 40] [--strategy random --strategy hybrid]

Prints one line a pair: "same" when every curve matches, else "differ",
and the parameters whose cache-layout list holds values no recorded config
takes (T4 files name no lists; kiln drops such values from a cache layout's
lists, so both layouts encode one space). Standard library only; exits 1
when a pair replays apart.
"""
import argparse
import gzip
import json
import pathlib
import subprocess
import sys


def untaken(path):
    """The cache layout's parameters listing a value no record takes."""
    with gzip.open(path, "rt") as f:
        data = json.load(f)
    out = []
    for k in data["tune_params_keys"]:
        taken = {json.dumps(r[k]) for r in data["cache"].values()}
        if any(json.dumps(v) not in taken for v in data["tune_params"][k]):
            out.append(k)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("t4_dir")
    ap.add_argument("cache_dir")
    ap.add_argument("--kiln", default="build/bin/kiln-lab")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--max-configs", type=int, default=40)
    ap.add_argument("--strategy", action="append")
    args = ap.parse_args()
    strategies = args.strategy or ["random", "hybrid"]
    failed = False
    for t4 in sorted(pathlib.Path(args.t4_dir).glob("*_T4.json.gz")):
        twin = pathlib.Path(args.cache_dir) / t4.name.replace("_T4.json.gz", ".json.gz")
        if not twin.exists():
            continue
        cmd = [args.kiln, "bench", "search", "--recorded", str(t4), str(twin), "--seeds",
               str(args.seeds), "--max-configs", str(args.max_configs), "--json"]
        for s in strategies:
            cmd += ["--strategy", s]
        rows = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        a, b = rows[0]["strategies"], rows[1]["strategies"]
        same = all(x["per_seed"] == y["per_seed"] for s in a for x, y in zip(a[s], b[s]))
        extra = untaken(twin)
        note = "same" if same else "differ"
        if extra:
            note += " (the cache layout lists untaken values of " + ", ".join(extra) + ")"
        failed = failed or not same
        print(f"{t4.name}: {note}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
