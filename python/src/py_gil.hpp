// The GIL's release and re-acquisition, safe at interpreter exit.
//
// Python 3.11 ends a thread that takes the GIL while the interpreter is
// finalizing with pthread_exit. Its forced unwind then runs through Kiln's
// noexcept frames (a destructor, a std::function called from a tuner
// thread), and std::terminate aborts the whole process: a daemon thread
// inside a kiln call turned a clean exit into exit 134. These guards park
// such a thread instead (what Python itself does from 3.14): they catch the
// forced unwind where the GIL is taken (finalization usually begins while
// the thread waits for it) and never leave the handler, so the thread never
// runs Python again and the process exits around it. Nothing joins it at
// exit: the runtimes that own Kiln's threads are never destroyed
// (py_runtime.cpp). Python code run inside a call (a hook, a runner, a
// DLPack export) may let the GIL go and take it back itself: each such call
// goes through calling_python, and so does the body of each bound entry
// point that runs one on the caller's thread: nanobind's catch (...) would
// otherwise meet the unwind and rethrow it as a null exception (SIGSEGV).
//
// A thread may also be inside Kiln without the GIL when the interpreter is
// done (opening a runtime, tuning): exit() would then run the C++ static
// destructors under it (a crash in find_backend, reading a destroyed list).
// end_early_at_exit() makes such an exit end the process before them.
// Checked by test_concurrency.py's daemon-thread tests.
#pragma once

#include <Python.h>
#include <cxxabi.h>

#include <utility>

namespace kiln::py {

// True once the interpreter has begun to finalize.
bool interpreter_finalizing();

// Blocks the calling thread for good; called instead of taking the GIL
// during finalization.
[[noreturn]] void park_for_exit();

// Counts the threads inside Kiln without the GIL (GilRelease).
void released_enter();
void released_leave();
// A forked child has only the forking thread, which holds the GIL.
void released_reset_in_child();

// Called once at import: when the interpreter has finalized while a thread
// is still inside Kiln without the GIL, the process ends with exit()'s
// status (stdio flushed) before any static destructor runs.
void end_early_at_exit();

// nb::gil_scoped_release, parking instead of re-taking the GIL at exit.
class GilRelease {
 public:
  GilRelease() : state_(PyEval_SaveThread()) { released_enter(); }
  ~GilRelease() {
    released_leave();
    if (interpreter_finalizing()) park_for_exit();
    // Finalization may begin while this thread waits for the GIL: taking
    // it then starts the forced unwind, caught here and parked.
    try {
      PyEval_RestoreThread(state_);
    } catch (abi::__forced_unwind&) {
      park_for_exit();
    }
  }
  GilRelease(const GilRelease&) = delete;
  GilRelease& operator=(const GilRelease&) = delete;

 private:
  PyThreadState* state_;
};

// nb::gil_scoped_acquire, parking instead of taking the GIL at exit.
class GilAcquire {
 public:
  GilAcquire() {
    if (interpreter_finalizing()) park_for_exit();
    try {
      state_ = PyGILState_Ensure();
    } catch (abi::__forced_unwind&) {
      park_for_exit();  // finalization began while this thread waited
    }
  }
  // Reached during finalization only by a forced unwind: Python code this
  // thread ran (a hook's time.sleep) let the GIL go, and taking it back
  // ended the thread. The GIL is not held then, so releasing it is fatal;
  // parking is not. (A thread holding the GIL cannot see finalization
  // begin: the finalizing thread sets it while holding the GIL.)
  ~GilAcquire() {
    if (interpreter_finalizing()) park_for_exit();
    PyGILState_Release(state_);
  }
  GilAcquire(const GilAcquire&) = delete;
  GilAcquire& operator=(const GilAcquire&) = delete;

 private:
  PyGILState_STATE state_;
};

// Runs Python code that may let the GIL go and take it back: a user's hook
// (time.sleep in grid(meta)), a runner, a DLPack export. When taking it
// back ends the thread, the forced unwind is caught here, before any Kiln
// frame runs its destructors without the GIL (Py_DECREFs, an ndarray's
// release), and the thread parks. Around a bound entry point's body it is
// the last line: an unwind the inner guards missed (a __del__ that sleeps)
// parks there instead of reaching nanobind's catch (...).
template <class F>
decltype(auto) calling_python(F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (abi::__forced_unwind&) {
    park_for_exit();
  }
}

}  // namespace kiln::py
