"""The ``kiln`` command of the Python package (pyproject.toml's
[project.scripts]): runs the program the package carries, kiln/bin/kiln.

A module of its own, outside the ``kiln`` package, so the command does not
import the package (and load its native module) before running a program
that loads the same library itself.
"""

import os
import sys


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    exe = os.path.join(here, "kiln", "bin", "kiln")
    if not os.access(exe, os.X_OK):
        sys.stderr.write(
            f"kiln: the command's program {exe} is missing or not executable: "
            "reinstall the package (pip install --force-reinstall kiln)\n"
        )
        return 2
    os.execv(exe, ["kiln", *sys.argv[1:]])
    return 0  # not reached: execv replaces the process


if __name__ == "__main__":
    sys.exit(main())
