#!/usr/bin/env python3
"""Kiln's size check: no production file over 500 lines and no production
function over 80 (docs/architecture.md, "Design rules"). Production code is
lib/, backends/, kernels/, tools/, include/ and the Python package
(python/kiln, python/src): not tests, benchmarks, fuzzers, examples or the
lab. Function lengths come from lizard (python/requirements-dev.txt).

Usage: scripts/check_sizes.py [SOURCE_DIR]   (exit 1 listing each breach;
prints the production line count, as `wc -l` counts it)
"""
import os
import sys

MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80
PRODUCTION = ("lib", "backends", "kernels", "tools", "include", "python/kiln", "python/src")
EXTENSIONS = (".cpp", ".hpp", ".h", ".py")


def production_files(root):
    for top in PRODUCTION:
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build", "__pycache__")))
            for f in sorted(files):
                if f.endswith(EXTENSIONS):
                    yield os.path.join(dirpath, f)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    try:
        import lizard
    except ImportError:
        print("check_sizes: the lizard package is missing: run scripts/setup.sh "
              "(it installs python/requirements-dev.txt into .venv) and run this with "
              ".venv/bin/python")
        return 2
    files = list(production_files(root))
    breaches, total = [], 0
    for path in files:
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().count("\n")
        total += lines
        if lines > MAX_FILE_LINES:
            breaches.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES}: split it by concept)")
        for fn in lizard.analyze_file(path).function_list:
            if fn.length > MAX_FUNCTION_LINES:
                breaches.append(f"{rel}:{fn.start_line}: {fn.name} is {fn.length} lines "
                                f"(at most {MAX_FUNCTION_LINES}: name its steps)")
    for b in breaches:
        print(b)
    print(f"production code: {len(files)} files, {total} lines")
    if breaches:
        print(f"{len(breaches)} size breach(es) (scripts/check_sizes.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
