// Triton's pre_hook / post_hook and do_bench= on the tuner's benchmark
// hooks (TuneOptions::hooks). The tuner calls them on its benchmark thread,
// so each takes the GIL. With hooks the run benchmarks in a thread on the
// caller's device and arguments (bench_plan.cpp), so `nargs` holds the
// caller's own arrays: what a hook writes there, the measured run sees.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <utility>
#include <vector>

#include "py_errors.hpp"
#include "py_gil.hpp"
#include "py_kernel_spec.hpp"
#include "py_runtime.hpp"

namespace nb = nanobind;

namespace kiln::py {

namespace {

// Triton's full_nargs: the call's arguments by name, then the config's
// parameters.
nb::dict nargs_of(const Hooks& h, const Config& c) {
  nb::dict d;
  for (auto [k, v] : h.named) d[k] = v;
  for (const auto& [k, v] : c.values()) d[k.c_str()] = from_value(v);
  return d;
}

// Runs `call` (a Python call) with the GIL: an exception it raises is the
// config's error naming `hook`; an interrupt is kept in h->pending, which
// stops the run and is raised when the tuner returns.
template <class F>
Status calling_hook(const Hooks* h, const char* hook, F&& call) {
  GilAcquire gil;
  HookScope scope(h);
  try {
    calling_python(std::forward<F>(call));
  } catch (nb::python_error& e) {
    return hook_error(hook, e, h->pending.get()).info();
  } catch (const Error& e) {
    return e.info();
  }
  return ok_status();
}

// do_bench(fn): `fn` makes one complete run of the config (the tuner's
// `run`), without the GIL while the kernel runs. It is valid only while
// do_bench runs: a kept fn called later is refused, never a dangling call.
Result<std::vector<double>> timed_by_do_bench(const Hooks* h, const std::function<Status()>& run) {
  GilAcquire gil;
  HookScope scope(h);
  auto open = std::make_shared<bool>(true);
  const std::function<Status()>* once = &run;
  nb::object fn = nb::cpp_function([open, once]() {
    if (!*open) {
      throw Error(ErrorCode::kInvalidArgument,
                  "do_bench's fn was called after do_bench returned: it runs the config only "
                  "while do_bench measures it");
    }
    Status st = ok_status();
    {
      GilRelease release;
      st = (*once)();
    }
    check(st);
  });
  struct Close {
    std::shared_ptr<bool> open;
    ~Close() { *open = false; }
  } close{open};
  try {
    // kiln/_hooks.py has made do_bench return a list of milliseconds.
    nb::object ms = calling_python([&] { return h->do_bench(fn); });
    std::vector<double> seconds;
    for (nb::handle v : ms) seconds.push_back(nb::cast<double>(v) * 1e-3);
    return seconds;
  } catch (nb::python_error& e) {
    return hook_error("do_bench", e, h->pending.get()).info();
  } catch (const nb::cast_error&) {
    return make_error(ErrorCode::kInvalidArgument,
                      "do_bench returned something other than milliseconds (a float or a list "
                      "of floats)");
  }
}

}  // namespace

void read_bench_hooks(nb::dict spec, KernelSpec& ks, TuneOptions& o) {
  Hooks* h = &ks.hooks;
  auto given = [&](const char* name) {
    return spec.contains(name) && !nb::borrow(spec[name]).is_none();
  };
  // The hooks point at ks.hooks: the tuned kernel outlives every run, and a
  // run with hooks waits for its benchmark thread (bench_crew.cpp).
  if (given("pre_hook")) {
    h->pre_hook = spec["pre_hook"];
    o.hooks.pre_run = [h](const Config& c, const ArgList&) {
      return calling_hook(h, "pre_hook", [&] { return h->pre_hook(nargs_of(*h, c)); });
    };
  }
  if (given("post_hook")) {
    h->post_hook = spec["post_hook"];
    o.hooks.post_run = [h](const Config& c, const ArgList&, const Status& run) {
      return calling_hook(h, "post_hook", [&] {
        nb::object exc = run.ok() ? nb::none() : exception_of(run.error());
        return h->post_hook(nargs_of(*h, c), nb::arg("exception") = exc);
      });
    };
  }
  if (given("do_bench")) {
    h->do_bench = spec["do_bench"];
    o.hooks.benchmark = [h](const Config&, const std::function<Status()>& run) {
      return timed_by_do_bench(h, run);
    };
  }
}

}  // namespace kiln::py
