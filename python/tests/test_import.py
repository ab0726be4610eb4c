"""`import kiln` loads no compiler and no driver; the CPU backend loads on
first use."""

from conftest import run_python

HEAVY = ("libLLVM", "libclang-cpp", "libnvrtc", "libcuda.so", "libkiln_cpu_backend")


def test_import_loads_no_backend():
    out = run_python(
        """
        import kiln, kiln._kiln as k
        maps = open("/proc/self/maps").read()
        heavy = [h for h in %r if h in maps]
        print("heavy:", heavy, "loaded:", k._cpu_backend_loaded())
        """ % (HEAVY,)
    )
    assert "heavy: [] loaded: False" in out, out


def test_backend_loads_on_first_use():
    out = run_python(
        """
        import kiln, kiln._kiln as k
        src = '#include "kiln/cpu_kernel.h"\\nvoid f(const kiln::cpu::BlockContext&, int* p) { *p = 7; }'
        kern = kiln.compile(src, "f", backend="cpu")
        maps = open("/proc/self/maps").read()
        print("llvm:", "libLLVM" in maps, "loaded:", k._cpu_backend_loaded())
        """
    )
    assert "llvm: True loaded: True" in out, out
