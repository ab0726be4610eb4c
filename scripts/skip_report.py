#!/usr/bin/env python3
"""Counts the skipped tests of a run by reason, and fails the run when a
skip hides a component scripts/setup.sh installs.

scripts/test.sh calls it after each ctest and pytest stage and once at the
end. It reads JUnit XML: ctest's --output-junit (a skipped test's output is
its <system-out>), pytest's --junitxml and gtest's --gtest_output=xml. Each
skip names its class with a tag, "[skip:CLASS] why" (KILN_SKIP in
tests/common/skip.hpp, or the start of a pytest reason):

  provided   a component setup.sh installs is missing (hiredis, redis-server,
             Open MPI, libzip, OpenBLAS, LLVM): the skip fails the run, which
             names the tests and the fix;
  allowed    a missing GPU and what needs one, the CUDA toolkit (setup.sh
             cannot install it), data outside the repository, conditions of
             the harness (sanitizer, not root, KILN_TUNING=0, the host):
             counted by reason. --require CLASS (KILN_TEST_REQUIRE) makes an
             allowed class fail too: .ci/run requires cuda-toolkit and wheel.

A skip with no tag, or an unknown one, fails the run too, so a new skip has
to say which it is. --allow-skips (test.sh --quick) reports every skip and
fails none.

  skip_report.py [--allow-skips] [--require CLASS,...] [--quiet] RESULTS.xml...

Exit status: 0, 1 when a skip fails the run, 2 when a results file cannot
be read or an argument is wrong.
"""

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

PROVIDED, ALLOWED = "provided", "allowed"
UNCLASSIFIED = "unclassified"

# Must list every tag of tests/common/skip.hpp and python/tests
# (tests/skips/skip_report_test.py checks).
CLASSES = {
    "llvm": (PROVIDED, "LLVM/Clang 19 absent when CMake configured: the CPU backend and its tests not built"),
    "hiredis": (PROVIDED, "built without hiredis/OpenSSL: the remote cache tier"),
    "redis-server": (PROVIDED, "no redis-server on PATH"),
    "mpi": (PROVIDED, "Open MPI absent: built without MPI, or no mpirun on PATH"),
    "libzip": (PROVIDED, "built without libzip: zipped recorded spaces"),
    "openblas": (PROVIDED, "OpenBLAS absent: kiln bench gemm"),
    "cuda-toolkit": (ALLOWED, "no CUDA toolkit (NVRTC), or one without the feature tested; setup.sh cannot install it"),
    "gpu": (ALLOWED, "no CUDA driver or device, or one without what the test needs"),
    "gpu-present": (ALLOWED, "a CUDA driver or device is here: the no-device path is for machines without"),
    "cupy": (ALLOWED, "CuPy absent (a GPU machine's own, not in python/requirements-dev.txt)"),
    "recorded-spaces": (ALLOWED, "../shared/recorded-spaces absent (data outside the repository)"),
    "sanitizer": (ALLOWED, "cannot run, or nothing to check, under this sanitizer"),
    "not-root": (ALLOWED, "needs root"),
    "tuning-off": (ALLOWED, "KILN_TUNING=0 in the environment"),
    "wheel": (ALLOWED, "no binary wheel named (KILN_WHEEL unset): scripts/test.sh's Python stage builds one"),
    "host": (ALLOWED, "a property of this machine: architecture, /dev/full, threads, privileges"),
}

FIXES = {
    PROVIDED: "run `bash scripts/setup.sh`; a library the build did not find needs a fresh configure "
    "(remove the build directory), then run again",
    "cuda-toolkit": "install the CUDA 13 toolkit at /usr/local/cuda or set CUDA_HOME, remove the build "
    "directory so CMake finds it, then run again",
    UNCLASSIFIED: "skip with KILN_SKIP(Skip::k...) (tests/common/skip.hpp) or start a pytest reason with "
    "[skip:CLASS]; a new class goes into CLASSES in scripts/skip_report.py",
}

TAG = re.compile(r"\[skip:([A-Za-z0-9_-]+)\][ \t]*([^\n]*)")
# ctest's own words for a skip, which say nothing of its reason.
CTEST_WORDS = re.compile(r"^(SKIP_REGULAR_EXPRESSION_MATCHED|SKIP_RETURN_CODE=\d+)$")


def case_name(case):
    name, suite = case.get("name", "?"), case.get("classname", "")
    if not suite or name.startswith(suite):
        return name  # ctest: the classname repeats the name
    return f"{suite}.{name}"


def skip_reason(case):
    """The skip's text when `case` was skipped, else None."""
    skipped = case.find("skipped")
    if skipped is None and case.get("status") not in ("notrun", "disabled") \
            and case.get("result") not in ("skipped", "suppressed"):
        return None
    parts = []
    if skipped is not None:
        parts += [skipped.get("message") or "", skipped.text or ""]
    parts.append(case.findtext("system-out") or "")
    return "\n".join(p for p in parts if p)


def classify(text):
    """(class, why) of a skip's text; the class is UNCLASSIFIED without a known tag."""
    m = TAG.search(text)
    if m and m.group(1) in CLASSES:
        return m.group(1), m.group(2).strip() or "(no reason given)"
    if m:
        return UNCLASSIFIED, f"unknown class [skip:{m.group(1)}] {m.group(2).strip()}"
    lines = [l.strip() for l in text.splitlines()]
    # gtest prints "FILE:LINE: Skipped" and then the message.
    for i, line in enumerate(lines[:-1]):
        if line.endswith("Skipped") and lines[i + 1]:
            return UNCLASSIFIED, lines[i + 1]
    said = [l for l in lines if l and not CTEST_WORDS.match(l)]
    return UNCLASSIFIED, said[0] if said else "(no reason given)"


def read_skips(paths):
    """{(class, test): {"why": str, "stages": [str]}} over every results file."""
    skips = {}
    for path in paths:
        stage = Path(path).name.removesuffix(".xml")
        for case in ET.parse(path).getroot().iter("testcase"):
            text = skip_reason(case)
            if text is None:
                continue
            cls, why = classify(text)
            entry = skips.setdefault((cls, case_name(case)), {"why": why, "stages": []})
            if stage not in entry["stages"]:
                entry["stages"].append(stage)
    return skips


def failing(cls, required):
    return cls == UNCLASSIFIED or cls in required or CLASSES[cls][0] == PROVIDED


def report(skips, required, allow, quiet, out):
    """Prints the report; returns whether a skip fails the run."""
    counts = {}
    for cls, _ in skips:
        counts[cls] = counts.get(cls, 0) + 1
    bad = sorted(c for c in counts if failing(c, required))
    if quiet and (allow or not bad):
        return False
    stages = sorted({s for e in skips.values() for s in e["stages"]})
    where = f" ({', '.join(stages)})" if stages else ""
    print(f"skips by reason{where}: {sum(counts.values()) or 'none'}", file=out)
    order = sorted(counts, key=lambda c: (not failing(c, required), -counts[c], c))
    for cls in order:
        policy = "allowed" if not failing(cls, required) else "would fail" if allow else "FAILS"
        what = CLASSES[cls][1] if cls in CLASSES else "no known [skip:CLASS] tag"
        print(f"  {counts[cls]:4d} {cls:<16} {policy:<11} {what}", file=out)
    for cls in bad:
        if cls == UNCLASSIFIED:
            head = "without a known class"
        elif CLASSES[cls][0] == PROVIDED:
            head = f"for {cls}, which scripts/setup.sh installs"
        else:
            head = f"for {cls}, which this run requires (KILN_TEST_REQUIRE / --require)"
        n = counts[cls]
        print(f"{'allowed (--quick)' if allow else 'FAIL'}: {n} test{'s' * (n != 1)} skipped {head}:",
              file=out)
        for (c, test), e in sorted(skips.items()):
            if c == cls:
                print(f"    {test} [{', '.join(e['stages'])}]: {e['why']}", file=out)
        fix = FIXES.get(cls) or FIXES.get(CLASSES[cls][0]) \
            or "make the condition hold here, or leave the class out of KILN_TEST_REQUIRE"
        print(f"  fix: {fix}", file=out)
    if allow:
        n = sum(counts[c] for c in bad)
        print(f"skips allowed (--quick): {n} of them would fail the full test command"
              if n else "skips allowed (--quick): none would fail the full test command", file=out)
    elif not bad and counts:
        print("skips: every one allowed", file=out)
    return bool(bad) and not allow


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="*", help="JUnit XML files (ctest, pytest or gtest); "
                        "none: only check the arguments")
    parser.add_argument("--allow-skips", action="store_true", help="report every skip, fail none")
    parser.add_argument("--require", default="", help="allowed classes that fail here too (comma-separated)")
    parser.add_argument("--quiet", action="store_true", help="print only when a skip fails the run")
    args = parser.parse_args(argv)
    required = {c.strip() for c in args.require.split(",") if c.strip()}
    unknown = sorted(required - CLASSES.keys())
    if unknown:
        print(f"skip_report: unknown class in --require / KILN_TEST_REQUIRE: {', '.join(unknown)} "
              f"(known: {', '.join(CLASSES)})", file=sys.stderr)
        return 2
    if not args.results:
        return 0
    try:
        skips = read_skips(args.results)
    except (OSError, ET.ParseError) as e:
        print(f"skip_report: cannot read the results: {e}", file=sys.stderr)
        return 2
    return 1 if report(skips, required, args.allow_skips, args.quiet, sys.stdout) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
