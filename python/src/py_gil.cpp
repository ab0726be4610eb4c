// See py_gil.hpp.
#include "py_gil.hpp"

#include <chrono>
#include <thread>

namespace kiln::py {

bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

void park_for_exit() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(24));
}

}  // namespace kiln::py
