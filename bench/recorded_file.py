"""A Kernel Tuner cache file (../shared/recorded-spaces/README.md), or its
T4 output file, as the bench scripts read it. Standard library only."""
import gzip
import json


def recorded_times(path):
    """The file's tuned parameter names, and every config (a tuple of values
    in that order) with its recorded time, None where it failed."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    if "results" in data and "cache" not in data:
        return _t4_times(data)
    keys = data["tune_params_keys"]
    times = {}
    for entry in data["cache"].values():
        t = entry.get("time")
        times[tuple(entry[k] for k in keys)] = t if isinstance(t, (int, float)) and t > 0 else None
    return keys, times


def _t4_times(data):
    """The same from a T4 output file: the configurations' key order, each
    valid result's "time" measurement, in the file's unit (the hub's: ms)."""
    results = data["results"]
    keys = list(results[0]["configuration"])
    times = {}
    for r in results:
        t = next((m.get("value") for m in r.get("measurements", []) if m.get("name") == "time"), None)
        ok = r.get("invalidity", "correct") == "correct" and isinstance(t, (int, float)) and t > 0
        times[tuple(r["configuration"][k] for k in keys)] = t if ok else None
    return keys, times
