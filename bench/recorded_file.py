"""A Kernel Tuner cache file (../shared/recorded-spaces/README.md), one a
run left open, its T4 output file or a KTT output file, as the bench
scripts read it: what
`kiln-lab tune --recorded` reads (lab/src/recorded_*.cpp). Standard library
only."""
import gzip
import json
import zipfile


def recorded_times(path):
    """The file's tuned parameter names, and every config (a tuple of values
    in that order) with its recorded time, None where it failed."""
    if zipfile.is_zipfile(path):  # one file inside, as Kiln reads it
        with zipfile.ZipFile(path) as z:
            names = [n for n in z.namelist() if not n.endswith("/") and not n.startswith("__MACOSX/")]
            if len(names) != 1:
                raise ValueError(f"{path}: a zip of {len(names)} files; extract the one to read")
            text = z.read(names[0]).decode()
    else:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            text = f.read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        data = _closed(text, error)
    if "results" in data and "cache" not in data:
        return _t4_times(data)
    if "Results" in data and "Metadata" in data and "cache" not in data:
        return _ktt_times(data)
    keys = data["tune_params_keys"]
    times = {}
    for entry in data["cache"].values():
        t = entry.get("time")
        times[tuple(entry[k] for k in keys)] = t if isinstance(t, (int, float)) and t > 0 else None
    return keys, times


def _closed(text, error):
    """A cache file Kernel Tuner left open (it writes the braces that close
    it only when a run ends, one record a line before that), closed as its
    own reader closes it: the trailing comma dropped, "}\n}" added; a last
    record cut off mid-line is dropped. A file that is closed and broken
    raises the parser's error."""
    s = text.rstrip(" \n\r\t")
    cache = s.find('"cache"')
    brace = s.find("{", cache) if cache >= 0 else -1
    if not s.startswith("{") or brace < 0 or s.endswith("}\n}") or s.endswith("}}}"):
        raise error
    candidates = []
    if s.endswith((",", "}")) or len(s) == brace + 1:
        candidates.append(s)
    last = s.rfind("},\n")
    candidates.append(s[: last + 2] if last > brace else s[: brace + 1])
    for body in candidates:
        try:
            return json.loads(body.removesuffix(",") + "}\n}")
        except json.JSONDecodeError:
            pass
    raise error


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


_KTT_MS = {"nanoseconds": 1e-6, "microseconds": 1e-3, "milliseconds": 1.0, "seconds": 1e3}


def _ktt_times(data):
    """The same from a KTT output file: the Configuration's order, each Ok
    result's TotalDuration in ms (lab/src/recorded_ktt.cpp)."""
    scale = _KTT_MS[data["Metadata"]["TimeUnit"].lower()]
    results = data["Results"]
    keys = [p["Name"] for p in results[0]["Configuration"]]
    times = {}
    for r in results:
        values = {p["Name"]: p["Value"] for p in r["Configuration"]}
        t = r.get("TotalDuration")
        ok = r.get("Status") == "Ok" and isinstance(t, (int, float)) and t > 0
        times[tuple(values[k] for k in keys)] = t * scale if ok else None
    return keys, times
