#!/usr/bin/env python3
"""The tree checkers catch what they are for: each runs on a small tree made
to break one rule and must name the breach; on the same tree without it
they pass. Usage: checkers_test.py SCRIPTS_DIR"""
import os
import subprocess
import sys
import tempfile


def F(*parts):
    """A path of a made-up tree, from its parts (so that no checker of the
    real tree reads it as a reference to a file)."""
    return "/".join(parts)

SCRIPTS = sys.argv[1]


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


def run(script, root):
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, script), root],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def expect(cond, what, output):
    if not cond:
        print(f"FAILED: {what}\n{output}")
        sys.exit(1)


def layers():
    with tempfile.TemporaryDirectory() as root:
        write(root, F("include", "kiln", "core", "config.hpp"), "#pragma once\n")
        write(root, F("include", "kiln", "tuner", "tuner.hpp"), '#include "kiln/core/config.hpp"\n')
        write(root, F("lib", "tuner", "pipeline.hpp"), "#pragma once\n")
        write(root, F("lib", "tuner", "internal", "clock.hpp"), "#pragma once\n")
        write(root, F("lib", "framework", "runner.cpp"), '#include "kiln/tuner/tuner.hpp"\n'
              '#include "tuner/internal/clock.hpp"\n')
        write(root, F("tools", "kiln", "main.cpp"), '#include "kiln/tuner/tuner.hpp"\n')
        code, out = run("check_layers.py", root)
        expect(code == 0, "a clean tree passes the layering check", out)
        # Up a layer: the core reading the tuner.
        write(root, F("lib", "core", "config.cpp"), '#include "kiln/tuner/tuner.hpp"\n')
        code, out = run("check_layers.py", root)
        expect(code == 1 and F("lib", "core", "config.cpp") + ":1" in out and "core may not include tuner" in out,
               "an include up a layer is named", out)
        os.remove(os.path.join(root, F("lib", "core", "config.cpp")))
        # Another area's private header, and an internal one read from the top.
        write(root, F("lib", "framework", "scope.cpp"), '#include "tuner/pipeline.hpp"\n')
        write(root, F("tools", "kiln", "cmd.cpp"), '#include "tuner/internal/clock.hpp"\n')
        code, out = run("check_layers.py", root)
        expect(code == 1 and F("lib", "framework", "scope.cpp") + ":1" in out and F("tools", "kiln", "cmd.cpp") + ":1" in out,
               "private and internal headers read across the line are named", out)


def sizes():
    with tempfile.TemporaryDirectory() as root:
        body = "".join(f"  x += {i};\n" for i in range(70))
        write(root, F("lib", "core", "ok.cpp"), "int f() {\n  int x = 0;\n" + body + "  return x;\n}\n")
        code, out = run("check_sizes.py", root)
        expect(code == 0, "a 73-line function in a short file passes", out)
        long_body = "".join(f"  x += {i};\n" for i in range(90))
        write(root, F("lib", "core", "long.cpp"), "int g() {\n  int x = 0;\n" + long_body + "  return x;\n}\n")
        write(root, F("kernels", "big.hpp"), "// line\n" * 501)
        code, out = run("check_sizes.py", root)
        expect(code == 1 and F("lib", "core", "long.cpp") + ":1: g is" in out and F("kernels", "big.hpp") + ": 501 lines" in out,
               "a long function and a long file are named", out)


layers()
sizes()
print("tree checkers: each catches its breach")
