// What a kernel spec's Python parts become on the native side: config
// values both ways, and the hooks (launch rule, constraints, pruning,
// reference) the tuner may call from its own threads, taking the GIL.
// Shared by kiln.autotune's tuned kernels and a kiln.Kernel's fixed-config
// calls (py_kernel_spec.hpp).
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kiln/tuner/tuner.hpp"
#include "py_errors.hpp"
#include "py_gil.hpp"

namespace kiln::py {

// A config parameter's value from Python (int, bool or str; else
// kiln.ConfigError naming `name`), and back.
Value to_value(nanobind::handle v, const std::string& name);
nanobind::object from_value(const Value& v);
// A dict of parameters as a Config (kiln.ConfigError for anything else).
Config to_config(nanobind::handle d);

// A Python exception raised by a user's callable, as a Kiln error naming
// the hook (the tuner records it against the config that ran it). An
// interrupt (KeyboardInterrupt, SystemExit) is no config's failure: inside a
// tuning run (`pending` given) it is kept there, stops the run and is raised
// when the tuner returns; outside one it is raised as itself at once.
Error hook_error(const char* hook, const nanobind::python_error& e, PendingInterrupt* pending);

struct Hooks;

// The hooks this thread is running now, innermost first (a chain through
// the stack). A launch rule runs on the tuner's benchmark threads, not on
// the thread that holds the tuning lock, so only this says that a call
// made there comes from inside the kernel's own tuning.
class HookScope {
 public:
  explicit HookScope(const Hooks* hooks) : hooks_(hooks), outer_(innermost_) { innermost_ = this; }
  ~HookScope() { innermost_ = outer_; }
  HookScope(const HookScope&) = delete;
  HookScope& operator=(const HookScope&) = delete;

  static bool inside(const Hooks* hooks) {
    for (const HookScope* s = innermost_; s; s = s->outer_)
      if (s->hooks_ == hooks) return true;
    return false;
  }

 private:
  const Hooks* hooks_;
  const HookScope* outer_;
  static thread_local const HookScope* innermost_;
};

// A size a user's callable returned (a DynamicDim map, a constraint, a key
// bucket's map): an int, named in the error otherwise.
std::int64_t size_of(nanobind::handle v, const char* what);

// Calls a user's callable (a DynamicDim map, a constraint) with the GIL
// held. An exception it raises becomes a ConfigError naming the callable
// and what it was given, so that a failing map reads as a bad spec rather
// than a bare ZeroDivisionError from inside choose_one; KeyboardInterrupt
// and SystemExit (not Exceptions) pass through as raised.
template <class Arg>
std::int64_t call_sized(PyObject* f, const Arg& arg, const std::string& what,
                        const std::string& given) {
  GilAcquire gil;
  try {
    return size_of(calling_python([&] { return nanobind::handle(f)(arg); }), what.c_str());
  } catch (nanobind::python_error& e) {
    if (is_interrupt(e)) throw;
    throw Error(ErrorCode::kInvalidArgument, what + " raised " + describe_exception(e) + " for " +
                                                 given +
                                                 ": it must return a size, an int, for every "
                                                 "value it is given");
  }
}

// What the launch rule and the hooks read; the tuner may call them from its
// own threads, so they take the GIL.
struct Hooks {
  nanobind::object config_cls;  // kiln.Config
  nanobind::object grid, block, shared_bytes;
  bool constant_geometry = true;
  LaunchGeometry constant;
  nanobind::object perf_model, early_config_prune, reference;
  // Around benchmark runs (py_bench_hooks.cpp); None when not given.
  nanobind::object pre_hook, post_hook, do_bench;
  std::vector<nanobind::object> constraints;  // callables of a config dict (kept alive here)
  // The call being tuned (set under the tuning lock): name -> argument.
  nanobind::dict named;
  std::set<std::string> kept;  // early_config_prune's verdict for that call
  bool has_kept = false;
  // An interrupt a hook raised during that call's tuning (null outside one).
  std::shared_ptr<PendingInterrupt> pending;

  // `c` as a kiln.Config.
  nanobind::object py_config(const Config& c) const;
  // The launch geometry of `c` for a call of these arguments by name.
  LaunchGeometry geometry(const Config& c, nanobind::handle call_named) const;
};

}  // namespace kiln::py
