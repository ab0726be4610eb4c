"""The search's own cost as a share of the tuning it steers (issue 56: under
5% at the recorded spaces' median benchmark time).

For each recorded file, `kiln-lab tune --recorded FILE` with the default
search (auto: hybrid at the default effort) and with `--search random` at
the same number of configs, interleaved, ROUNDS times. Both replay the
file on a virtual clock, so their CPU time is the search's decisions plus
the replay's bookkeeping; random decides next to nothing, so the
difference of the medians is what the default search costs to decide.
That cost is set against the tuning it steers two ways:
- the file's own: the replay's simulated wall time of the tuning (its
  recorded compile and benchmark times, on one compile worker);
- at the median benchmark time: configs x the median over the files of
  each file's median recorded `benchmark_time` per config (the time one
  config's timed runs took on its GPU), compiles not counted.
Standard library only.
  python3 bench/search_cost_share.py [--rounds 3] [--kiln-lab build/bin/kiln-lab] FILE...
"""
import argparse
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys


def median_benchmark_s(path):
    """The file's median recorded benchmark_time per config, in seconds."""
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        cache = json.load(f)["cache"]
    times = [e["benchmark_time"] / 1e3 for e in cache.values()
             if isinstance(e.get("benchmark_time"), (int, float)) and e["benchmark_time"] > 0]
    return statistics.median(times) if times else None


def cpu_run(cmd):
    """(CPU seconds of the child, its JSON report)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--kiln-lab", default="build/bin/kiln-lab")
    a = ap.parse_args()
    if not os.access(a.kiln_lab, os.X_OK):
        sys.exit(f"search_cost_share.py: no kiln-lab at {a.kiln_lab}: build it "
                 "(cmake --build build --target kiln_lab_cli) or pass --kiln-lab")
    rows = []
    for path in a.files:
        default_cpu, random_cpu, report = [], [], None
        for r in range(a.rounds):
            base = [a.kiln_lab, "tune", "--recorded", path, "--json"]
            # Interleaved, the order alternating; round 0 runs the default
            # first, which gives random its count of configs.
            for which in ("default", "random") if r % 2 == 0 else ("random", "default"):
                if which == "default":
                    cpu, report = cpu_run(base)
                    default_cpu.append(cpu)
                else:
                    count = str(report["stats"]["configs"])
                    cpu, _ = cpu_run(base + ["--search", "random", "--max-configs", count])
                    random_cpu.append(cpu)
        configs = report["stats"]["configs"]
        search = max(0.0, statistics.median(default_cpu) - statistics.median(random_cpu))
        rows.append({"file": os.path.basename(path), "configs": configs,
                     "default_cpu_s": statistics.median(default_cpu),
                     "random_cpu_s": statistics.median(random_cpu), "search_s": search,
                     "simulated_wall_s": report["simulated_wall_s"],
                     "median_benchmark_s": median_benchmark_s(path)})
    across = statistics.median(r["median_benchmark_s"] for r in rows if r["median_benchmark_s"])
    print(f"median over the files of the median benchmark time per config: {across * 1e3:.1f} ms")
    print("| file | configs | search CPU (default - random) | per config | of the simulated tuning "
          "| of configs x the median benchmark time |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        own = r["search_s"] / r["simulated_wall_s"]
        at_median = r["search_s"] / (r["configs"] * across)
        print(f"| {r['file']} | {r['configs']} | {r['search_s']:.2f} s ({r['default_cpu_s']:.2f} - "
              f"{r['random_cpu_s']:.2f}) | {r['search_s'] / r['configs'] * 1e3:.1f} ms "
              f"| {own:.2%} | {at_median:.2%} |")


if __name__ == "__main__":
    main()
