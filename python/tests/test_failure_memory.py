"""Remembered failures from Python: a config that failed is skipped by a
later process while its cause stands, measured again by retune() and by
KILN_RETUNE=1, and forgotten once a header it could not find exists
(docs/autotuning.md, "Remembered failures")."""

import os
import pathlib

from conftest import SAXPY, run_python

# BLOCK = 1024 does not compile.
BROKEN = SAXPY.replace("int n) {\n", "int n) {\n  static_assert(BLOCK != 1024, \"BLOCK 1024 is broken\");\n")

SCRIPT = """
import os
{env}
import numpy as np, kiln
k = kiln.Kernel({source!r}, entry="saxpy<{{BLOCK}}>", backend="cpu", name="saxpy_memory",
                signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),))
t = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (256, 1024)], key=["n"],
                  restore_value=["y"])(k)
{before}
x = np.ones(4096, dtype=np.float32); y = np.zeros(4096, dtype=np.float32)
try:
    t(2.0, x, y, 4096)
except kiln.NoValidConfigError as e:
    print("no valid config:", str(e).replace(chr(10), " | "))
s = t.stats()
print(s["skipped_failed_before"], s["failed"], t.source() or "-")
"""


def run(cache, source, env="", before=""):
    return run_python(SCRIPT.format(env=env, source=source, before=before), cache).strip().splitlines()


def remove_records(cache):
    """The tuning records go, the remembered failures beside them stay."""
    for f in (pathlib.Path(cache) / "tuning").glob("*.json"):
        f.unlink()


def test_a_failure_is_skipped_until_retune_or_kiln_retune_measures_it_again(fresh_cache):
    assert run(fresh_cache, BROKEN)[-1] == "0 1 tuned"
    remove_records(fresh_cache)
    assert run(fresh_cache, BROKEN)[-1] == "1 0 tuned", "skipped as failed before"
    remove_records(fresh_cache)
    assert run(fresh_cache, BROKEN, before="t.retune()")[-1] == "0 1 tuned"
    remove_records(fresh_cache)
    assert run(fresh_cache, BROKEN, env='os.environ["KILN_RETUNE"] = "1"')[-1] == "0 1 tuned"


def test_a_header_created_where_the_compiler_looked_ends_the_failure(fresh_cache, tmp_path):
    header = tmp_path / "inc" / "extra.h"
    source = f'#include "{header}"\n' + SAXPY
    first = run(fresh_cache, source)
    assert first[0].startswith("no valid config:"), first
    second = run(fresh_cache, source)
    assert "skipped as failed before" in second[0], second
    header.parent.mkdir()
    header.write_text("// here now\n")
    assert run(fresh_cache, source)[-1] == "0 0 tuned"
