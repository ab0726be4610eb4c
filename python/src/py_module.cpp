// The native half of the `kiln` Python package (python/kiln/ is the other).
// Importing it opens no backend: LLVM, NVRTC and the CUDA driver load on
// the first call that needs them.
#include <nanobind/nanobind.h>

#include "py_runtime.hpp"

namespace nb = nanobind;

namespace kiln::py {
void register_compile(nb::module_& m);
void register_autotune(nb::module_& m);
void register_fixed_config(nb::module_& m);
void register_framework(nb::module_& m);
void register_collective(nb::module_& m);
}  // namespace kiln::py

NB_MODULE(_kiln, m) {
  m.doc() = "Kiln's native core (use the kiln package, not this module)";
  // Tuned kernels hold Python callables (launch rules, hooks) that nanobind
  // cannot traverse for the cycle collector; those alive at exit are not
  // leaks of the bindings' making, and the report would only be noise.
  nb::set_leak_warnings(false);
  kiln::py::register_runtime(m);
  kiln::py::register_compile(m);
  kiln::py::register_autotune(m);
  kiln::py::register_fixed_config(m);
  kiln::py::register_framework(m);
  kiln::py::register_collective(m);
}
