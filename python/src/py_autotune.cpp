// kiln.autotune's native half: a kernel template with its space, launch
// rule and hooks (Python callables), called like a function. A call
// converts its arguments, looks its key up in this object's own table (the
// warm path: no Python above the call but the launch rule's callables), and
// on a miss asks the process's Autotuner (memory, disk, or a tuning run).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "py_args.hpp"
#include "py_collective.hpp"
#include "py_errors.hpp"
#include "py_gil.hpp"
#include "py_kernel_spec.hpp"
#include "py_launch.hpp"
#include "py_runtime.hpp"

namespace nb = nanobind;

namespace kiln::py {

namespace {

// One key's decision, served without the tuner.
struct Entry {
  TuneResult result;
  nb::object config;  // kiln.Config
};

nb::dict timing_dict(const Measurement& m, nb::object config) {
  nb::dict d;
  d["config"] = config;
  d["status"] = outcome_name(m.outcome);
  if (m.ok()) {
    d["median"] = m.stats.median;
    d["min"] = m.stats.min;
    d["max"] = m.stats.max;
    d["spread"] = m.stats.spread;
    d["reps"] = m.stats.reps;
  } else {
    d["reason"] = m.reason();
  }
  d["compile_seconds"] = m.compile_seconds;
  d["benchmark_seconds"] = m.benchmark_seconds;
  return d;
}

class Autotuned {
 public:
  explicit Autotuned(nb::dict spec) { init(spec); }

  // Hooks run on this thread (grid(meta), early_config_prune): see
  // calling_python.
  nb::object call(nb::args args, nb::kwargs kwargs) {
    return calling_python([&] { return call_here(args, kwargs); });
  }

  nb::object call_here(nb::args args, nb::kwargs kwargs) {
    refuse_reentry();
    nb::handle stream = core_.stream_keyword(kwargs);
    if (generation_ != fork_generation()) {  // a forked child: start from this process's Kiln
      table_.clear();
      rt_.reset();
      generation_ = fork_generation();
    }
    // Before the conversion, whose warning of a read-only array would only
    // repeat this error.
    for (const auto& [i, role] : core_.written)
      if (i < args.size()) check_writable(args[i], core_.params()[i], core_.name().c_str(), role);
    CallArgs ca = convert_args(core_.params(), core_.key_mask, args, core_.name().c_str(),
                               core_.buckets, core_.named_outputs);
    if (!rt_) {
      const std::string kind = core_.kind_from(ca);
      GilRelease release;
      rt_ = runtime(kind);
    }
    nb::dict named;
    if (!core_.hooks.constant_geometry) named = core_.named_args(args);
    auto it = table_.find(ca.key);
    if (it == table_.end()) {
      if (core_.hooks.constant_geometry) named = core_.named_args(args);
      // A call over no blocks (grid cdiv(n, BLOCK) with n = 0) runs nothing,
      // as in Triton, and is not tuned: every config would time an empty
      // launch, and the key would keep whichever came first.
      if (default_grid_is_empty(named)) return nb::none();
      it = table_.emplace(ca.key, tune(ca, named)).first;
    } else {
      ++fast_hits_;
    }
    // A reference of our own: another thread may clear the table (retune)
    // while this one launches without the GIL.
    const std::shared_ptr<Entry> held = it->second;
    const Entry& e = *held;
    last_config_ = e.config;
    const LaunchGeometry g = core_.hooks.geometry(e.result.config, named);
    if (empty_grid(g.grid)) return nb::none();
    std::optional<Stream> s = to_stream(rt_->device(), stream, args);
    Status st = ok_status();
    {
      GilRelease release;
      st = launch_with_resets(rt_->device(), e.result.kernel, core_.kernel, g, ca.args,
                              s ? &*s : nullptr);
    }
    check(st);
    return nb::none();
  }

  // Whether the space's default config launches no blocks for this call. A
  // launch rule that fails there is not this check's to report: the tuning
  // then records it as that config's failure, as for any other.
  bool default_grid_is_empty(nb::handle named) const {
    try {
      return empty_grid(core_.hooks.geometry(core_.kernel.tmpl.space.default_config(), named).grid);
    } catch (const Error&) {
      return false;
    }
  }

  // A call from inside this kernel's own tuning (a hook or the launch rule
  // calling the kernel) would wait for the tuning lock that its own thread
  // holds, or that the thread it works for holds (a launch rule runs on the
  // tuner's benchmark threads): a deadlock, refused instead. Other threads
  // wait for the lock as before.
  void refuse_reentry() const {
    if (tuning_thread_.load() != std::this_thread::get_id() && !HookScope::inside(&core_.hooks))
      return;
    throw Error(ErrorCode::kInvalidArgument,
                core_.name() +
                    " was called from inside its own tuning (by early_config_prune, perf_model, "
                    "reference, pre_hook, post_hook, do_bench, a constraint or the launch rule "
                    "while it tunes): that call "
                    "would wait forever for the tuning it is part of. Call another kernel "
                    "there: run a fixed config of the kiln.Kernel (kernel(*args, BLOCK=...)), "
                    "compile it separately with kiln.compile, or tune it in a second "
                    "kiln.autotune(...) object");
  }

  nb::object best_config() const { return last_config_; }

  nb::dict stats() const {
    const KernelStats& s = stats_;
    nb::dict d;
    d["hits"] = s.cache_hits + fast_hits_;
    d["misses"] = s.cache_misses;
    d["configs"] = s.configs;
    d["compiled"] = s.compiled;
    d["artifact_hits"] = s.artifact_hits;
    d["benchmarked"] = s.benchmarked;
    d["failed"] = s.failed;
    nb::dict by;
    for (const auto& [k, v] : s.failed_by_reason) by[k.c_str()] = v;
    d["failed_by_reason"] = by;
    // Configs not measured because they failed in an earlier run and the
    // failure still stands (retune() measures them again).
    d["skipped_failed_before"] = s.skipped_failed_before;
    // Configs a run cut short measured, taken from its journal.
    d["resumed"] = s.resumed;
    d["warm_started"] = s.warm_started;  // neighbours' winners measured first
    d["finalists"] = s.finalists;        // configs measured again at the end
    d["compile_seconds"] = s.compile_seconds;
    d["benchmark_seconds"] = s.benchmark_seconds;
    d["overlap_seconds"] = s.overlap_seconds;
    d["wall_seconds"] = s.wall_seconds;
    // Keys with no record while tuning is off: served the nearest tuned
    // key's winner, or the default (source(key) says which key).
    d["served_nearest"] = s.served_nearest;
    d["served_default"] = s.served_default;
    return d;
  }

  // Every key's measurements (key tuple -> list of dicts), as tuned.
  nb::dict measurements() const { return measured_; }
  nb::dict sources() const { return sources_; }

  void set_trace(const std::string& path) { options_.pipeline.trace_path = path; }
  void clear() {
    table_.clear();
    options_.cache.retune = false;
  }
  void set_retune(bool on) {
    options_.cache.retune = on;
    if (on) table_.clear();
  }
  const std::string& name() const { return core_.name(); }

 private:
  void init(nb::dict spec) {
    read_kernel_spec(spec, core_);
    options_ = read_tune_options(spec, core_);
    // Checks the space now: a placeholder naming no parameter, an empty
    // space, a default outside it, each named (kiln.ConfigError).
    core_.kernel.tmpl.check();
  }

  // The key's values as a tuple: scalars as given, tensors as their shape,
  // each bucketed size as its representative.
  nb::tuple key_tuple(const CallArgs& ca) const {
    nb::list out;
    for (std::size_t i = 0; i < core_.params().size(); ++i) {
      if (!core_.key_mask[i]) continue;
      const Arg& a = ca.args[i];
      if (a.is_tensor) {
        nb::list shape;
        for (std::size_t d = 0; d < a.tensor.shape.size(); ++d)
          shape.append(key_size(core_.buckets, i, static_cast<int>(d), a.tensor.shape[d]));
        out.append(nb::tuple(shape));
      } else if (i < core_.buckets.size() && !core_.buckets[i].empty()) {
        out.append(key_size(core_.buckets, i, -1, nb::cast<std::int64_t>(arg_view(a))));
      } else {
        out.append(arg_view(a));
      }
    }
    return nb::tuple(out);
  }

  // The thread that holds tune_mutex_ (refuse_reentry), and the interrupt
  // slot of its run (Hooks::pending), for as long as it holds it.
  class TuningRun {
   public:
    explicit TuningRun(Autotuned& t) : t_(t) {
      t_.tuning_thread_.store(std::this_thread::get_id());
      t_.core_.hooks.pending = std::make_shared<PendingInterrupt>();
    }
    ~TuningRun() {
      t_.core_.hooks.pending.reset();
      t_.tuning_thread_.store(std::thread::id());
    }
    TuningRun(const TuningRun&) = delete;
    TuningRun& operator=(const TuningRun&) = delete;

   private:
    Autotuned& t_;
  };

  std::shared_ptr<Entry> tune(CallArgs& ca, nb::dict named) {
    std::unique_lock lock(tune_mutex_, std::defer_lock);
    {
      GilRelease release;
      lock.lock();
    }
    TuningRun run(*this);
    try {
      return tune_locked(ca, named);
    } catch (...) {
      // A hook's interrupt, not the error it left behind for the tuner.
      core_.hooks.pending->raise_if_pending();
      throw;
    }
  }

  std::shared_ptr<Entry> tune_locked(CallArgs& ca, nb::dict named) {
    core_.hooks.named = named;
    core_.hooks.has_kept = false;
    if (!core_.hooks.early_config_prune.is_none()) {
      nb::list configs;
      for (const Config& c : core_.kernel.tmpl.space.enumerate())
        configs.append(core_.hooks.py_config(c));
      nb::object kept;
      try {
        kept = calling_python([&] { return core_.hooks.early_config_prune(configs, named); });
      } catch (nb::python_error& e) {
        throw hook_error("early_config_prune", e, nullptr);  // this thread: an interrupt as itself
      }
      core_.hooks.kept.clear();
      if (!nb::isinstance<nb::list>(kept) && !nb::isinstance<nb::tuple>(kept)) {
        throw Error(ErrorCode::kInvalidArgument,
                    "early_config_prune returned " + nb::cast<std::string>(nb::repr(kept)) +
                        ": it returns the list of configs to keep (kiln.Config or dicts)");
      }
      for (auto c : kept) {
        nb::object params;
        if (nb::isinstance(c, core_.hooks.config_cls)) {
          params = c.attr("kwargs");
        } else if (nb::isinstance<nb::dict>(c)) {
          params = nb::borrow(c);
        } else {
          throw Error(ErrorCode::kInvalidArgument,
                      "early_config_prune returned a list holding " +
                          nb::cast<std::string>(nb::repr(c)) +
                          ": each item is a kiln.Config (or a dict of parameters)");
        }
        core_.hooks.kept.insert(to_config(params).to_string());
      }
      core_.hooks.has_kept = true;
    }
    Result<TuneResult> r = make_error(ErrorCode::kInternal, "not tuned");
    // Ctrl-C stops the run: the tuner asks, on this thread, while it waits
    // on its workers; Python runs the SIGINT handler (KeyboardInterrupt, or
    // the user's own) there. The exception is taken out of the thread's
    // error indicator at once, so no later hook call meets it, and raised
    // when the tuner has returned (kCancelled: nothing saved). An interrupt
    // a hook raised (Hooks::pending) stops the run the same way.
    std::shared_ptr<PendingInterrupt> pending = core_.hooks.pending;
    TuneOptions options = options_;
    options.pipeline.interrupted = [pending] {
      GilAcquire gil;
      if (pending->pending()) return true;
      if (PyErr_CheckSignals() == 0) return false;
      pending->keep_current();
      return true;
    };
    {
      GilRelease release;
      r = tune_with_ranks(*rt_, core_.kernel, ca.args, ca.key, options);
    }
    pending->raise_if_pending();
    // NOTES: a signal that came after the last check is raised here, not
    // inside the first Python call below (which would make it a SystemError).
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    if (!r.ok()) raise(r.error());
    stats_.merge(r->stats);
    auto e = std::make_shared<Entry>();
    e->result = std::move(*r);
    e->config = core_.hooks.py_config(e->result.config);
    const nb::tuple key = key_tuple(ca);
    nb::list ms;
    for (const Measurement& m : e->result.measurements)
      ms.append(timing_dict(m, core_.hooks.py_config(m.config)));
    if (e->result.source == ResultSource::kTuned || !measured_.contains(key)) measured_[key] = ms;
    sources_[key] = e->result.source == ResultSource::kNearest
                        ? "nearest: " + e->result.record->problem.canonical()
                        : std::string(source_name(e->result.source));
    if (e->result.source == ResultSource::kFallback || e->result.source == ResultSource::kFailed) {
      no_valid_config(e->result, key);
    }
    return e;
  }

  [[noreturn]] void no_valid_config(const TuneResult& r, nb::handle key) const {
    nlohmann::json failures = nlohmann::json::array();
    std::string lines;
    for (const Measurement& m : r.measurements) {
      if (m.ok()) continue;
      std::string reason = m.reason();
      failures.push_back(
          {m.config.to_string(), std::string(outcome_name(m.outcome)) + ": " + reason});
      if (reason.size() > 200) reason = reason.substr(0, 200) + "...";
      lines += "\n  " + m.config.to_string() + ": " + outcome_name(m.outcome) + ": " + reason;
    }
    // Configs skipped as failed before are named too: without them, "2
    // tried" of a space of 8 reads as a search that gave up.
    for (const FailedConfig& f : r.skipped) {
      std::string reason = f.reason.size() > 200 ? f.reason.substr(0, 200) + "..." : f.reason;
      lines += "\n  " + f.config.to_string() + ": " + f.outcome + " in an earlier run: " + reason;
    }
    const std::string skipped =
        r.skipped.empty() ? ""
                          : ", " + std::to_string(r.skipped.size()) +
                                " skipped as failed before (retune() measures them again)";
    ErrorInfo info{ErrorCode::kInvalidArgument,
                   core_.name() + ": no config ran correctly for the key " +
                       nb::cast<std::string>(nb::repr(key)) + " (" +
                       std::to_string(r.measurements.size()) + " tried" + skipped + "):" + lines +
                       "\nfix the kernel or widen the space; check=False skips the output check",
                   {}};
    info.details["kind"] = "no_valid_config";
    info.details["failures_json"] = failures.dump();
    raise(info);
  }

  KernelSpec core_;  // the kernel, its signature and hooks (py_kernel_spec.hpp)
  TuneOptions options_;
  std::shared_ptr<Runtime> rt_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> table_;  // touched with the GIL held
  std::mutex tune_mutex_;
  std::atomic<std::thread::id> tuning_thread_{};  // see TuningRun
  std::uint64_t generation_ = fork_generation();
  std::uint64_t fast_hits_ = 0;
  KernelStats stats_;  // this object's tunings and lookups (TuneResult::stats, merged)
  nb::object last_config_ = nb::none();
  nb::dict measured_, sources_;
};

}  // namespace

void register_autotune(nb::module_& m) {
  nb::class_<Autotuned>(m, "_Autotuned", nb::dynamic_attr())
      .def(nb::init<nb::dict>(), nb::arg("spec"))
      .def("__call__", &Autotuned::call)
      .def_prop_ro("best_config", &Autotuned::best_config)
      .def("_stats", &Autotuned::stats)
      .def("_measurements", &Autotuned::measurements)
      .def("_sources", &Autotuned::sources)
      .def("_set_trace", &Autotuned::set_trace)
      .def("_set_retune", &Autotuned::set_retune)
      .def("_clear", &Autotuned::clear)
      .def_prop_ro("_name", &Autotuned::name);
}

}  // namespace kiln::py
