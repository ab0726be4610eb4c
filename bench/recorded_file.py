"""A Kernel Tuner cache file (../shared/recorded-spaces/README.md), as the
bench scripts read it. Standard library only."""
import gzip
import json


def recorded_times(path):
    """The file's tuned parameter names, and every config (a tuple of values
    in that order) with its recorded time, None where it failed."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    keys = data["tune_params_keys"]
    times = {}
    for entry in data["cache"].values():
        t = entry.get("time")
        times[tuple(entry[k] for k in keys)] = t if isinstance(t, (int, float)) and t > 0 else None
    return keys, times
