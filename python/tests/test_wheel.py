"""The binary wheel (scripts/build_wheel.sh), used as a user would: a fresh
venv holding the wheel and numpy only, on a machine whose LLVM, Clang and
their headers are hidden (a mount namespace binds empty folders and files
over them). There `import kiln`, a CPU compile, a tune and a warm rerun in
a new process work, `kiln --help` and `kiln info` run, and every library
Kiln brings into a process, or that its binaries link, is the wheel's own or
one the manylinux policy lets a system provide.

The wheel is the one KILN_WHEEL names (scripts/test.sh's Python stage
builds it and sets it). Needs root, for the mount namespace."""

import glob
import importlib.util
import json
import os
import re
import subprocess
import sys
import zipfile

import pytest

from conftest import SAXPY

# What the manylinux policies let a wheel take from the system (auditwheel's
# lib_whitelist, less the X11 and GL libraries Kiln has no use for), and
# the loader.
ALLOWED_SYSTEM = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libutil.so.1",
    "libresolv.so.2", "libnsl.so.1", "libgcc_s.so.1", "libstdc++.so.6", "libz.so.1",
    "libexpat.so.1", "libatomic.so.1", "libmvec.so.1", "libanl.so.1", "ld-linux-x86-64.so.2",
    "linux-vdso.so.1",
}

# What the mount namespace hides: the system's LLVM and Clang, their
# libraries and headers, every version installed.
HIDDEN_DIRS = ["/usr/lib/llvm-*", "/usr/lib/clang", "/usr/include/clang", "/usr/include/clang-c",
               "/usr/include/llvm-*", "/usr/include/llvm-c-*"]
HIDDEN_FILES = ["/usr/lib/x86_64-linux-gnu/libLLVM*", "/usr/lib/x86_64-linux-gnu/libclang*",
                "/usr/bin/clang*", "/usr/bin/llvm-*"]


def _wheel() -> str:
    path = os.environ.get("KILN_WHEEL", "")
    if not path:
        pytest.skip("[skip:wheel] KILN_WHEEL names no wheel: build one with "
                    "`bash scripts/build_wheel.sh` and set KILN_WHEEL to its path "
                    "(scripts/test.sh's Python stage does both)")
    if not os.path.isfile(path):
        pytest.fail(f"KILN_WHEEL={path} is not a file: build it with bash scripts/build_wheel.sh")
    return path


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    if r.returncode != 0:
        pytest.fail(f"{cmd} exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}")
    return r


@pytest.fixture(scope="module")
def auditwheel_show():
    """`auditwheel show` of the wheel (AUDITWHEEL_SHOW), started before the
    other tests: reading libLLVM's symbols is most of this module's CPU
    time, and runs on one core while they use the other."""
    wheel = _wheel()
    if importlib.util.find_spec("auditwheel") is None:
        pytest.fail("auditwheel is missing from this venv: run bash scripts/setup.sh")
    proc = subprocess.Popen([sys.executable, "-c", AUDITWHEEL_SHOW, wheel], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    yield proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def user_venv(tmp_path_factory, auditwheel_show):
    """A venv with the wheel and numpy, nothing of the build's."""
    wheel = _wheel()
    if os.geteuid() != 0:
        pytest.skip("[skip:not-root] a mount namespace (unshare -m) needs root")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"[skip:host] this root may not make a mount namespace (unshare -m: "
                    f"{probe.stderr.strip()}): a container without CAP_SYS_ADMIN")
    root = tmp_path_factory.mktemp("user")
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    py = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
          "--no-index", "--disable-pip-version-check", wheel])
    # numpy as a user's own: this venv's copy (PyPI's wheel), reached by a
    # .pth file rather than downloaded again.
    import numpy
    numpy_dir = root / "numpy-only"
    numpy_dir.mkdir()
    site = os.path.dirname(os.path.dirname(numpy.__file__))
    for name in ("numpy", "numpy.libs"):
        if os.path.isdir(os.path.join(site, name)):
            os.symlink(os.path.join(site, name), numpy_dir / name)
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    with open(os.path.join(purelib.stdout.strip(), "numpy_only.pth"), "w") as f:
        f.write(str(numpy_dir) + "\n")
    return venv


def _hidden(cmd, env=None) -> subprocess.CompletedProcess:
    """Runs cmd in a mount namespace where the system's LLVM and Clang are
    empty folders and empty files."""
    empty_dir, empty_file = "/tmp/kiln-hidden-dir", "/tmp/kiln-hidden-file"
    os.makedirs(empty_dir, exist_ok=True)
    open(empty_file, "a").close()
    mounts = [f"mount --bind {empty_dir} {d}" for p in HIDDEN_DIRS for d in sorted(glob.glob(p))
              if os.path.isdir(d) and not os.path.islink(d)]
    mounts += [f"mount --bind {empty_file} {f}" for p in HIDDEN_FILES for f in sorted(glob.glob(p))
               if os.path.isfile(f) and not os.path.islink(f)]
    script = " && ".join(mounts + ['exec "$@"'])
    return _run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "hide", *cmd],
                env=env)


USER_PROGRAM = r'''
import json, os, sys
import numpy as np
import kiln

SAXPY = %r
report = {"llvm_dir": os.listdir("/usr/lib/llvm-19") if os.path.isdir("/usr/lib/llvm-19") else None}
saxpy = kiln.Kernel(SAXPY, entry="saxpy<{BLOCK}>", backend="cpu",
                    signature=["a: f32", "x: f32*", "y: f32*", "n: i32"],
                    grid=lambda meta: (kiln.cdiv(meta["n"], meta["BLOCK"]),))
tuned = kiln.autotune(configs=[kiln.Config(BLOCK=b) for b in (256, 1024)],
                      key=["n"], restore_value=["y"])(saxpy)
x = np.ones(10_000, dtype=np.float32)
y = np.zeros(10_000, dtype=np.float32)
tuned(2.0, x, y, x.size)
report["saxpy_ok"] = bool((y == 2.0).all())
report["source"] = tuned.source()
report["benchmarked"] = tuned.stats()["benchmarked"]
one = kiln.compile('#include "kiln/cpu_kernel.h"\nvoid seven(const kiln::cpu::BlockContext&, int* p) { *p = 7; }',
                   "seven", backend="cpu")
out = np.zeros(1, dtype=np.int32)
one(out, grid=(1,))
report["compile_ok"] = int(out[0]) == 7
report["maps"] = sorted({line.split()[-1] for line in open("/proc/self/maps")
                         if len(line.split()) >= 6 and ".so" in line.split()[-1]})
report["modules"] = sorted(n for n in sys.modules if not n.startswith("kiln") and n != "__main__")
print("REPORT " + json.dumps(report))
'''

# A process without Kiln that imports every other module the user's program
# ended with (numpy, hashlib, ...): what it maps is Python's and numpy's.
BASELINE_PROGRAM = r'''
import importlib, json, sys
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except Exception:
        pass
print("REPORT " + json.dumps({"maps": sorted({line.split()[-1] for line in open("/proc/self/maps")
                                              if len(line.split()) >= 6 and ".so" in line.split()[-1]})}))
'''


def _report(stdout: str) -> dict:
    line = [l for l in stdout.splitlines() if l.startswith("REPORT ")]
    assert line, stdout
    return json.loads(line[-1][len("REPORT "):])


def _foreign(paths, venv, baseline) -> list:
    """The libraries in paths that neither the venv nor the allowed system
    set provides, and that a process without Kiln does not load."""
    venv = os.path.realpath(venv)
    return [p for p in paths if not os.path.realpath(p).startswith(venv + os.sep)
            and p not in baseline and os.path.basename(p) not in ALLOWED_SYSTEM]


def test_wheel_works_without_the_system_llvm(user_venv, tmp_path):
    py = str(user_venv / "bin" / "python")
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("PYTHONPATH", None)
    program = USER_PROGRAM % SAXPY
    cold = _report(_hidden([py, "-c", program], env=env).stdout)
    base = _report(_hidden([py, "-c", BASELINE_PROGRAM, json.dumps(cold["modules"])],
                           env=env).stdout)["maps"]
    assert cold["llvm_dir"] == [], "the system's LLVM is not hidden: " + repr(cold["llvm_dir"])
    assert cold["saxpy_ok"] and cold["compile_ok"], cold
    assert cold["source"] == "tuned" and cold["benchmarked"] == 2, cold
    assert any("kiln.libs" in p and "libLLVM" in p for p in cold["maps"]), cold["maps"]
    assert _foreign(cold["maps"], user_venv, base) == [], cold["maps"]
    warm = _report(_hidden([py, "-c", program], env=env).stdout)
    assert warm["saxpy_ok"] and warm["compile_ok"], warm
    assert warm["source"] == "disk" and warm["benchmarked"] == 0, warm
    assert _foreign(warm["maps"], user_venv, base) == [], warm["maps"]


def test_wheel_kiln_command(user_venv):
    kiln = str(user_venv / "bin" / "kiln")
    helped = _hidden([kiln, "--help"]).stdout
    assert "info" in helped and "tune" in helped, helped
    # The toolchain section loads the CPU plugin, LLVM with it: the wheel's.
    info = _hidden([kiln, "info"]).stdout
    assert re.search(r"^\s*llvm\s+\d+\.\d+", info, re.MULTILINE), info
    # The wheel has no MPI: a wheel user is pointed at Python's collectives,
    # not at a package to install and a build to redo.
    distributed = next(l for l in info.splitlines() if l.startswith("Distributed"))
    assert "kiln.set_collective" in distributed and "libopenmpi" not in distributed, distributed


def test_wheel_binaries_link_only_the_wheel_and_allowed_system_libraries(user_venv):
    purelib = glob.glob(str(user_venv / "lib" / "python3*" / "site-packages"))[0]
    elves = [p for p in glob.glob(os.path.join(purelib, "kiln*", "**", "*"), recursive=True)
             if os.path.isfile(p) and open(p, "rb").read(4) == b"\x7fELF"]
    names = {os.path.basename(p) for p in elves}
    for wanted in ("libkiln_cpu_backend.so", "kiln-bench-worker", "kiln", "libkiln.so"):
        assert wanted in names, sorted(names)
    assert any(n.startswith("libLLVM") for n in names), sorted(names)
    assert not any(n.startswith(("libcuda", "libnvrtc")) for n in names), sorted(names)
    script = "for f in \"$@\"; do echo \"== $f\"; ldd \"$f\"; done"
    out = _hidden(["sh", "-c", script, "ldd", *elves]).stdout
    assert "not found" not in out, out
    outside = sorted({m.group(1) for m in re.finditer(r"=> (/\S+)", out)
                      if not m.group(1).startswith(os.path.realpath(purelib))
                      and os.path.basename(m.group(1)) not in ALLOWED_SYSTEM})
    assert outside == [], outside
    assert os.path.isfile(os.path.join(purelib, "kiln", "clang", "include", "stddef.h"))


# `auditwheel show`, with one change: auditwheel reads each library's
# undefined symbols once per manylinux policy (a dozen), which for libLLVM
# (about 600,000 symbols) is most of a minute; the answer is the file's,
# so it is read once.
AUDITWHEEL_SHOW = r'''
import functools, sys
import auditwheel.elfutils
auditwheel.elfutils.get_undefined_symbols = functools.cache(auditwheel.elfutils.get_undefined_symbols)
from auditwheel.main import main
sys.argv = ["auditwheel", "show", sys.argv[1]]
sys.exit(main())
'''


def test_auditwheel_names_only_allowed_system_libraries(auditwheel_show):
    wheel = _wheel()
    out, err = auditwheel_show.communicate(timeout=600)
    assert auditwheel_show.returncode == 0, f"auditwheel show exited {auditwheel_show.returncode}\n{out}\n{err}"
    text = " ".join(out.split())
    assert "will need to be eliminated" not in text, out
    assert re.search(r"consistent with the following platform tag: \"manylinux_2_\d+_x86_64\"", text), out
    # It names the libraries it copied into the wheel too (kiln.libs/).
    with zipfile.ZipFile(wheel) as z:
        carried = {os.path.basename(n) for n in z.namelist() if n.startswith("kiln.libs/")}
    named = set(re.findall(r"(\S+\.so[.\d]*) with versions", text))
    assert "libc.so.6" in named, out
    assert named - carried <= ALLOWED_SYSTEM, (sorted(named - carried - ALLOWED_SYSTEM), out)
