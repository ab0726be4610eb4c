#!/usr/bin/env python3
"""Kiln's layering check: no include goes up a layer, and no area reads
another area's private headers (docs/architecture.md, "Layers").

Every product file belongs to one part (PARTS: its folder). A part may
include its own files and the public headers (include/kiln/<area>/) and
shared internals (lib/<area>/internal/) of the parts below it (BELOW).
A private header of a lib/ area outside its internal/ folder is its area's
alone; internal/ headers are for lib/ only: the parts above lib/ (backends,
kernels, the tools, Python) use public headers. Tests, benchmarks, fuzzers
and the lab may read anything of the product; nothing of the product reads
the lab.

Usage: scripts/check_layers.py [SOURCE_DIR]   (exit 1 listing each breach)
"""
import os
import re
import sys

# Folder prefix -> part. The longest matching prefix decides.
PARTS = {
    "lib/core": "core", "lib/keys": "core", "include/kiln/core": "core",
    "lib/process": "process", "include/kiln/process": "process",
    "lib/compile": "compile", "include/kiln/compile": "compile",
    "lib/device": "device", "include/kiln/device": "device",
    "backends": "backends", "include/kiln/backends": "backends",
    "lib/cache": "cache", "include/kiln/cache": "cache",
    "lib/search": "search", "include/kiln/search": "search",
    "lib/tuner": "tuner", "include/kiln/tuner": "tuner",
    "lib/framework": "framework", "include/kiln/framework": "framework",
    "lib/distributed": "distributed", "include/kiln/distributed": "distributed",
    "kernels": "kernels", "include/kiln/kernels": "kernels",
    "include/kiln/kiln.hpp": "umbrella",
    "tools/kiln": "cli", "tools/worker": "worker", "python": "python",
    "lab": "lab",
    "tests/lab": "lab-tests", "tests": "tests", "bench": "bench", "fuzz": "fuzz",
    "examples": "examples",
}

# What each part may include besides itself: the link order. search stands
# on the core alone; the backends on the device interface; the parts on top
# on everything of the product.
_LIB = ["core", "process", "compile", "device", "cache", "search", "tuner", "framework",
        "distributed"]
BELOW = {
    "core": [],
    "process": ["core"],
    "compile": ["core", "process"],
    "device": ["core", "process", "compile"],
    "backends": ["core", "process", "compile", "device"],
    "cache": ["core", "process", "compile"],
    "search": ["core"],
    "tuner": ["core", "process", "compile", "device", "cache", "search"],
    "framework": ["core", "process", "compile", "device", "cache", "search", "tuner"],
    "distributed": ["core", "process", "compile", "device", "cache", "search", "tuner"],
    "kernels": _LIB + ["backends"],
    "umbrella": _LIB + ["backends", "kernels"],
}
_PRODUCT = _LIB + ["backends", "kernels", "umbrella"]
for top in ("cli", "worker", "python"):
    BELOW[top] = _PRODUCT
BELOW["lab"] = _PRODUCT
for free in ("tests", "bench", "fuzz", "examples"):
    BELOW[free] = _PRODUCT + ["cli", "worker", "python"]
BELOW["lab-tests"] = BELOW["tests"] + ["tests", "lab"]
BELOW["fuzz"] = BELOW["fuzz"] + ["lab"]  # the recorded-space reader is fuzzed too
# Parts that may read every product private header: they test or measure
# the insides, and the lab replays the tuner's own pipeline on recorded
# spaces. The rest keep to public headers and, inside lib/, internals.
READS_PRIVATE = {"tests", "lab-tests", "bench", "fuzz", "lab"}

SOURCE_EXT = (".cpp", ".hpp", ".h", ".cc", ".cu")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def part_of(rel):
    best = None
    for prefix, part in PARTS.items():
        if rel == prefix or rel.startswith(prefix + "/"):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, part)
    return best[1] if best else None


def resolve(root, rel, name):
    """The repository path `name` names from file `rel`, or None (generated,
    system or third-party)."""
    here = os.path.dirname(rel)
    for base in (here, "include", "lib", "backends", "kernels", "lab", "lab/include",
                 "tests/common"):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def is_private(rel):
    return rel.startswith(("lib/", "backends/", "kernels/", "tools/", "python/src/", "lab/"))


def lib_area(rel):
    parts = rel.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "lib" else None


def check(root):
    breaches = []
    for top in ("lib", "backends", "kernels", "include", "tools", "python", "lab", "tests",
                "bench", "fuzz", "examples"):
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [d for d in dirs if not d.startswith(("build", "."))]
            for f in files:
                if not f.endswith(SOURCE_EXT):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                src = part_of(rel)
                if src is None:
                    continue
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for m in INCLUDE.finditer(text):
                    target = resolve(root, rel, m.group(1))
                    if target is None:
                        continue
                    dst = part_of(target)
                    line = text.count("\n", 0, m.start()) + 1
                    where = f"{rel}:{line}: #include \"{m.group(1)}\""
                    if dst is None or dst == src:
                        if dst == src and lib_area(target) and lib_area(rel) != lib_area(target) \
                                and "/internal/" not in target:
                            breaches.append(f"{where}: a private header of lib/{lib_area(target)}/ "
                                            "read by another area: move it to "
                                            f"lib/{lib_area(target)}/internal/")
                        continue
                    if dst not in BELOW.get(src, []):
                        breaches.append(f"{where}: {src} may not include {dst} "
                                        f"({target}): that goes up a layer or sideways")
                        continue
                    if src in READS_PRIVATE or not is_private(target):
                        continue
                    if lib_area(target) and "/internal/" in target and rel.startswith("lib/"):
                        continue
                    breaches.append(f"{where}: {src} reads {dst}'s private header {target}; "
                                    "use a public header (include/kiln/), or, inside lib/, "
                                    "an internal/ one")
    return breaches


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    breaches = check(root)
    for b in breaches:
        print(b)
    if breaches:
        print(f"{len(breaches)} include(s) break the layers (scripts/check_layers.py)")
        return 1
    print("layers: every include goes down or stays in its part")
    return 0


if __name__ == "__main__":
    sys.exit(main())
