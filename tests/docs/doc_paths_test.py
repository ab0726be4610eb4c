#!/usr/bin/env python3
"""Every file the docs and the code's comments name exists in the tree.

A path that names a file of the repository (docs/caching.md,
lib/tuner/search_memory.hpp, `kiln/cache/failed_configs.hpp` under
include/ or lab/include/, bench/search_goal_shares.py) and that is no longer there sends a
reader to nothing: a renamed file leaves its old name behind in prose no
compiler reads. Brace lists (`entry_format.{hpp,cpp}`) and globs
(`backends/cuda/nvrtc_*`, `search_gp.*`) are expanded. Names of the
in-memory files the CPU compiler gives its units are not on disk and are
listed below. Exit 0 when every name resolves, 1 with each stale one and
where it is named.

usage: python3 tests/docs/doc_paths_test.py [ROOT]
"""

import glob
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", ".."))

# Top-level folders whose files a path may name.
AREAS = ("lib", "tools", "include", "bench", "scripts", "tests", "templates", "examples",
         "python", "backends", "kernels", "fuzz", "cmake", "docs", "lab")
# Where a `kiln/...` header lives: the product's include/, the lab's own.
INCLUDE_DIRS = ("include/", "lab/include/")
# Files of the in-memory root of a CPU compile (backends/cpu/clang_prelude.hpp,
# clang_compiler.cpp), which no disk holds.
VIRTUAL = {"kiln/cpu_kernel.h", "kiln/cpu_pch.h", "include/stddef.h"}
# Where prose is read: docs, and every source file's comments.
SOURCES = (".cpp", ".hpp", ".h", ".cu", ".py", ".sh", ".cmake", ".txt", ".md")

REPO_PATH = re.compile(
    r"(?<![\w/.$-])((?:%s)/[\w./*{},-]*[\w*}])" % "|".join(AREAS))
HEADER = re.compile(r"(?<![\w/.$-])(kiln/[\w/{},]+\.(?:hpp|h)\b)")


def expand(path):
    """`a.{hpp,cpp}` -> [a.hpp, a.cpp]; nested braces are not used."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    out = []
    for part in m.group(1).split(","):
        out += expand(path[:m.start()] + part + path[m.end():])
    return out


def exists(path):
    full = os.path.join(ROOT, path)
    if "*" in path:
        return bool(glob.glob(full))
    return os.path.exists(full) or os.path.exists(full.rstrip("."))


def files():
    for name in ("README.md",):
        yield name
    for area in AREAS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, area)):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for f in filenames:
                if f.endswith(SOURCES):
                    yield os.path.relpath(os.path.join(dirpath, f), ROOT)


def stale_names():
    stale = {}
    for rel in files():
        try:
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        c_family = rel.endswith((".cpp", ".hpp", ".h", ".cu"))
        for number, line in enumerate(lines, 1):
            if line.lstrip().startswith("#include"):
                continue  # the compiler checks those
            if c_family:
                # Comments only: a string in code is a label or a test's
                # input, not a reference to a file.
                at = line.find("//")
                if at >= 0:
                    line = line[at:]
                elif not line.lstrip().startswith("*"):
                    continue
            for m in REPO_PATH.finditer(line):
                path = m.group(1).rstrip(".,")
                if path in VIRTUAL or "." not in os.path.basename(path) and "*" not in path:
                    continue  # a folder or a prefix, not a file name
                for p in expand(path):
                    if not exists(p):
                        stale.setdefault(p, []).append(f"{rel}:{number}")
            for m in HEADER.finditer(line):
                for p in expand(m.group(1)):
                    if p not in VIRTUAL and not any(exists(d + p) for d in INCLUDE_DIRS):
                        stale.setdefault(p, []).append(f"{rel}:{number}")
    return stale


def main():
    stale = stale_names()
    for path, where in sorted(stale.items()):
        print(f"{path}: no such file, named at {', '.join(where[:5])}"
              + (f" and {len(where) - 5} more" if len(where) > 5 else ""))
    if stale:
        print(f"{len(stale)} stale file name(s): point them at the file's new place, or drop them")
        return 1
    print("every file the docs and comments name exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
