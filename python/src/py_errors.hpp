// Python exceptions raised by a user's callable (a kernel's hooks and launch
// rule, a kiln.Runner, a DynamicDim map): told apart from the user stopping
// the program, described for an error message, and, when the callable ran
// under a tuner that cannot carry them, kept until the tuner returns.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <string>

namespace kiln::py {

// KeyboardInterrupt or SystemExit (any BaseException that is not an
// Exception): the user stopping the program, never a callable's failure.
bool is_interrupt(const nanobind::python_error& e);

// "RuntimeError: the message (at /path/file.py:12)": the exception and the
// innermost frame, the one that raised it. Not e.what(): that is the whole
// traceback, outermost caller first, and a reader that cuts a reason to a
// few hundred characters kept only the callers. Needs the GIL.
std::string describe_exception(const nanobind::python_error& e);

// An interrupt raised in a callable the tuner called: on one of the tuner's
// own threads (a launch rule on a benchmark thread) it cannot propagate,
// and on any thread the tuner would record it as a config's failure. It
// is kept here, the tuner's interruption poll (TuneOptions::pipeline.
// interrupted) reports it, the run stops as for Ctrl-C (nothing saved), and
// the caller raises it once the tuner has returned. Used with the GIL held.
class PendingInterrupt {
 public:
  // Keeps `e` (the first interrupt only) when it is an interrupt; true then.
  bool keep_if_interrupt(const nanobind::python_error& e);
  // Keeps the exception now set in this thread (what a signal handler run by
  // PyErr_CheckSignals raised), clearing it there.
  void keep_current();
  bool pending() const { return error_.has_value(); }
  // Raises the kept exception, if any.
  void raise_if_pending() const;

 private:
  std::optional<nanobind::python_error> error_;
};

}  // namespace kiln::py
