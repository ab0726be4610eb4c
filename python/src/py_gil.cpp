// See py_gil.hpp.
#include "py_gil.hpp"

#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace kiln::py {

namespace {

std::atomic<int> g_released_threads{0};

// Runs first among exit()'s handlers: registered after every static was
// built, at the end of Py_FinalizeEx, and handlers run in reverse order.
void end_before_static_destructors(int status, void*) {
  if (g_released_threads.load() == 0) return;  // an ordinary exit
  std::fflush(nullptr);
  std::_Exit(status);
}

void after_python_finalized() {
  ::on_exit(end_before_static_destructors, nullptr);
}

}  // namespace

void released_enter() {
  g_released_threads.fetch_add(1);
}
void released_leave() {
  g_released_threads.fetch_sub(1);
}
void released_reset_in_child() {
  g_released_threads.store(0);
}

void end_early_at_exit() {
  Py_AtExit(after_python_finalized);
}

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
