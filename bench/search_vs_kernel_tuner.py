#!/usr/bin/env python3
"""Kiln's default search against Kernel Tuner's strategies, per recorded file and budget.

usage: search_vs_kernel_tuner.py [--seeds N] [--budgets 0.005,0.01,0.02,0.05]
           [--kiln-lab BIN] [--kt-python PY] [--kt-json FILE] [--kt-log FILE]
           [--kiln-json BUDGET=FILE] [--json OUT] FILE.json.gz...

For each file and budget (a share of the file's configs), the median over
seeds of the best-so-far's fraction of the optimum: Kiln's default search
(`hybrid` on these spaces: `auto` picks it whenever the budget does not
cover the space) run by `kiln-lab bench search` once per budget (Kiln plans
by its budget), and Kernel Tuner 1.5.0's strategies in its simulation mode
(bench/kernel_tuner_strategies.py, one run to the largest budget, read at
each). Prints, per file and budget, Kiln's median, Kernel Tuner's best
strategy there and its median, and whether Kiln is at or above it; then the
means. `--kt-json` reuses a saved Kernel Tuner run (its --json output) and
`--kt-log` one's printed lines (a run cut short before writing its JSON);
both may be repeated, for a run done in parts. `--kiln-json 0.01=FILE`
reuses Kiln's saved run at a budget (`kiln-lab bench search ... --json`).
Kernel Tuner comes from build/kt-venv (bench/kernel_tuner_compare.sh makes it).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

KT_STRATEGIES = ["genetic_algorithm", "pso", "dual_annealing", "simulated_annealing", "diff_evo",
                 "firefly_algorithm", "basinhopping", "random_sample"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def name_of(path):
    return os.path.basename(path).replace(".json.gz", "").replace(".json", "")


def kiln_medians(args, budget):
    saved = dict(item.split("=", 1) for item in args.kiln_json or [])
    if str(budget) in saved:  # a saved `kiln-lab bench search --json` run at this budget
        with open(saved[str(budget)]) as f:
            return {name_of(e["file"]): e["strategies"]["hybrid"][-1]["median"]
                    for e in json.load(f)}
    out = subprocess.run([args.kiln_lab, "bench", "search", "--recorded", *args.files, "--strategy",
                          "hybrid", "--seeds", str(args.seeds), "--budget-fraction", str(budget),
                          "--json"], check=True, capture_output=True, text=True).stdout
    return {name_of(f["file"]): f["strategies"]["hybrid"][-1]["median"] for f in json.loads(out)}


LOG_LINE = re.compile(r"^(\S+) (\S+): reaching .*; median at 0\.5/1/2/5% ([-0-9./]+); evaluations")


def kt_from_log(path):
    """kernel_tuner_strategies.py's printed lines as its --json entries
    (medians only, which is all this comparison reads)."""
    files = {}
    with open(path) as f:
        for line in f:
            m = LOG_LINE.match(line)
            if not m:
                continue
            name, strategy, medians = m.groups()
            row = {}
            for point, text in zip(("0.005", "0.01", "0.02", "0.05"), medians.split("/")):
                if text != "-":
                    row[point] = {"median": float(text)}
            files.setdefault(name, {"file": name, "strategies": {}})["strategies"][strategy] = row
    return list(files.values())


def kt_runs(args, budgets):
    if args.kt_json or args.kt_log:
        runs = []
        for path in args.kt_json or []:
            with open(path) as f:
                runs += json.load(f)
        for path in args.kt_log or []:
            runs += kt_from_log(path)
        return runs
    path = (args.json or "search_vs_kt") + ".kt.json"
    cmd = [args.kt_python, os.path.join(ROOT, "bench", "kernel_tuner_strategies.py"), "--seeds",
           str(args.seeds), "--budget-fraction", str(max(budgets)), "--json", path, *args.files]
    for s in KT_STRATEGIES:
        cmd += ["--strategy", s]
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--seeds", type=int, default=25)
    ap.add_argument("--budgets", default="0.005,0.01,0.02,0.05")
    ap.add_argument("--kiln-lab", default=os.path.join(ROOT, "build", "bin", "kiln-lab"))
    ap.add_argument("--kt-python", default=os.path.join(ROOT, "build", "kt-venv", "bin", "python"))
    ap.add_argument("--kt-json", action="append")
    ap.add_argument("--kt-log", action="append")
    ap.add_argument("--kiln-json", action="append", metavar="BUDGET=FILE")
    ap.add_argument("--json")
    args = ap.parse_args()
    budgets = [float(b) for b in args.budgets.split(",")]
    kt = {}
    for e in kt_runs(args, budgets):  # a later part's strategies add to an earlier's
        kt.setdefault(name_of(e["file"]), {}).update(e["strategies"])
    rows = []
    for b in budgets:
        kiln = kiln_medians(args, b)
        for name, median in kiln.items():
            best = max(((s, r[str(b)]["median"]) for s, r in kt.get(name, {}).items()
                        if str(b) in r), key=lambda x: x[1], default=(None, float("nan")))
            rows.append({"file": name, "budget": b, "kiln": median, "kt_best": best[0],
                         "kt_best_median": best[1]})
    print(f"{'file':28} {'budget':>6} {'Kiln':>6} {'KT best':>6}  strategy")
    for r in rows:
        mark = "" if r["kiln"] >= r["kt_best_median"] - 1e-9 else "  (Kiln below)"
        print(f"{r['file']:28} {r['budget'] * 100:5.1f}% {r['kiln']:6.3f} {r['kt_best_median']:6.3f}"
              f"  {r['kt_best']}{mark}")
    for b in budgets:
        at = [r for r in rows if r["budget"] == b]
        print(f"mean at {b * 100:.1f}%: Kiln {statistics.mean(r['kiln'] for r in at):.3f}, "
              f"Kernel Tuner's best per file {statistics.mean(r['kt_best_median'] for r in at):.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
