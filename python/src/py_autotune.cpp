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
#include "py_errors.hpp"
#include "py_gil.hpp"
#include "py_launch.hpp"
#include "py_runtime.hpp"

namespace nb = nanobind;

namespace kiln::py {

namespace {

Value to_value(nb::handle v, const std::string& name) {
  if (nb::isinstance<nb::bool_>(v)) return Value{v.ptr() == Py_True};
  if (nb::isinstance<nb::int_>(v)) return Value{int64_of(v, "config parameter " + name)};
  if (nb::isinstance<nb::str>(v)) return Value{nb::cast<std::string>(v)};
  throw Error(ErrorCode::kInvalidArgument, "config parameter " + name + " has the value " +
                                               nb::cast<std::string>(nb::repr(v)) +
                                               ": a value is an int, a bool or a str");
}

nb::object from_value(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return nb::int_(*i);
  if (const auto* b = std::get_if<bool>(&v)) return nb::bool_(*b);
  return nb::str(std::get<std::string>(v).c_str());
}

Config to_config(nb::handle d) {
  Config c;
  if (!nb::isinstance<nb::dict>(d)) {
    throw Error(ErrorCode::kInvalidArgument, "a config is " + nb::cast<std::string>(nb::repr(d)) +
                                                 ": give a kiln.Config or a dict of parameters");
  }
  for (auto [k, v] : nb::borrow<nb::dict>(d)) {
    if (!nb::isinstance<nb::str>(k)) {
      throw Error(ErrorCode::kInvalidArgument, "a config names the parameter " +
                                                   nb::cast<std::string>(nb::repr(k)) +
                                                   ": parameter names are strings");
    }
    const std::string name = nb::cast<std::string>(k);
    c.set(name, to_value(v, name));
  }
  return c;
}

// A Python exception raised by a user's callable, as a Kiln error naming
// the hook (the tuner records it against the config that ran it). An
// interrupt (KeyboardInterrupt, SystemExit) is no config's failure: inside a
// tuning run (`pending` given) it is kept there, stops the run and is raised
// when the tuner returns; outside one it is raised as itself at once.
Error hook_error(const char* hook, const nb::python_error& e, PendingInterrupt* pending) {
  if (is_interrupt(e)) {
    if (!pending) throw e;
    pending->keep_if_interrupt(e);
    return Error(ErrorCode::kCancelled,
                 std::string(hook) + " raised " + describe_exception(e) + ": the tuning run stops");
  }
  return Error(ErrorCode::kInvalidArgument, std::string(hook) + " raised " + describe_exception(e));
}

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
thread_local const HookScope* HookScope::innermost_ = nullptr;

// What the launch rule and the hooks read; the tuner may call them from its
// own threads, so they take the GIL.
struct Hooks {
  nb::object config_cls;  // kiln.Config
  nb::object grid, block, shared_bytes;
  bool constant_geometry = true;
  LaunchGeometry constant;
  nb::object perf_model, early_config_prune, reference;
  std::vector<nb::object> constraints;  // callables of a config dict (kept alive here)
  // The call being tuned (set under the tuning lock): name -> argument.
  nb::dict named;
  std::set<std::string> kept;  // early_config_prune's verdict for that call
  bool has_kept = false;
  // An interrupt a hook raised during that call's tuning (null outside one).
  std::shared_ptr<PendingInterrupt> pending;

  nb::object py_config(const Config& c) const {
    nb::dict kw;
    for (const auto& [k, v] : c.values()) kw[k.c_str()] = from_value(v);
    nb::object made = nb::steal(PyObject_Call(config_cls.ptr(), nb::tuple().ptr(), kw.ptr()));
    // A failed call (a KeyboardInterrupt delivered inside Config.__init__)
    // is raised as itself, never used as a null object.
    if (!made.is_valid()) throw nb::python_error();
    return made;
  }

  LaunchGeometry geometry(const Config& c, nb::handle call_named) const {
    if (constant_geometry) return constant;
    nb::dict meta;
    for (auto [k, v] : nb::borrow<nb::dict>(call_named)) meta[k] = v;
    for (const auto& [k, v] : c.values()) meta[k.c_str()] = from_value(v);
    auto eval = [&](const nb::object& f, const char* what) -> nb::object {
      if (!PyCallable_Check(f.ptr())) return f;
      try {
        return calling_python([&] { return f(meta); });
      } catch (nb::python_error& e) {
        if (is_interrupt(e)) throw;  // the caller (the launch rule's wrapper) decides
        throw hook_error(what, e, nullptr);
      }
    };
    LaunchGeometry g;
    g.grid = to_dim3(eval(grid, "grid(meta)"), "grid", /*empty_ok=*/true);
    g.block = to_dim3(eval(block, "block(meta)"), "block");
    g.shared_bytes = to_shared_bytes(eval(shared_bytes, "shared_bytes(meta)"));
    return g;
  }
};

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
    nb::handle stream = nb::none();
    if (kwargs.size()) {
      for (auto [k, v] : kwargs) {
        if (nb::cast<std::string>(k) != "stream") {
          throw Error(ErrorCode::kInvalidArgument,
                      name_ + " got the keyword argument '" + nb::cast<std::string>(k) +
                          "': arguments are positional, in signature order; the only keyword "
                          "is stream=");
        }
        stream = v;
      }
    }
    if (generation_ != fork_generation()) {  // a forked child: start from this process's Kiln
      table_.clear();
      rt_.reset();
      generation_ = fork_generation();
    }
    // Before the conversion, whose warning of a read-only array would only
    // repeat this error.
    for (const auto& [i, role] : written_)
      if (i < args.size()) check_writable(args[i], params_[i], name_.c_str(), role);
    CallArgs ca = convert_args(params_, key_mask_, args, name_.c_str());
    if (!rt_) {
      const BackendKind kind = kind_from(ca);
      GilRelease release;
      rt_ = runtime(kind);
    }
    nb::dict named;
    if (!hooks_.constant_geometry) named = named_args(args);
    auto it = table_.find(ca.key);
    if (it == table_.end()) {
      if (hooks_.constant_geometry) named = named_args(args);
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
    const LaunchGeometry g = hooks_.geometry(e.result.config, named);
    if (empty_grid(g.grid)) return nb::none();
    std::optional<Stream> s = to_stream(rt_->device(), stream, args);
    Status st = ok_status();
    {
      GilRelease release;
      st = launch_with_resets(rt_->device(), e.result.kernel, kernel_, g, ca.args,
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
      return empty_grid(hooks_.geometry(kernel_.tmpl.space.default_config(), named).grid);
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
    if (tuning_thread_.load() != std::this_thread::get_id() && !HookScope::inside(&hooks_)) return;
    throw Error(ErrorCode::kInvalidArgument,
                name_ +
                    " was called from inside its own tuning (by early_config_prune, perf_model, "
                    "reference, a constraint or the launch rule while it tunes): that call "
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
    d["compile_seconds"] = s.compile_seconds;
    d["benchmark_seconds"] = s.benchmark_seconds;
    d["overlap_seconds"] = s.overlap_seconds;
    d["wall_seconds"] = s.wall_seconds;
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
  const std::string& name() const { return name_; }

 private:
  void init(nb::dict spec) {
    name_ = nb::cast<std::string>(spec["name"]);
    kernel_.tmpl.name = name_;
    kernel_.tmpl.source = nb::cast<std::string>(spec["source"]);
    kernel_.tmpl.entry = nb::cast<std::string>(spec["entry"]);
    kernel_.tmpl.options = nb::cast<std::vector<std::string>>(spec["options"]);
    for (auto [k, v] : nb::borrow<nb::dict>(spec["headers"])) {
      kernel_.tmpl.headers.push_back(Header{nb::cast<std::string>(k), nb::cast<std::string>(v)});
    }
    kernel_.version = nb::cast<std::string>(spec["version"]);
    backend_ = nb::cast<std::string>(spec["backend"]);
    params_ = parse_signature(nb::cast<std::vector<std::string>>(spec["signature"]));
    names_.clear();
    for (const auto& p : params_) names_.push_back(p.name);

    // The space: each parameter's values, the constraints, the default.
    ConfigSpace& space = kernel_.tmpl.space;
    for (auto item : nb::borrow<nb::list>(spec["params"])) {
      nb::tuple t = nb::borrow<nb::tuple>(item);
      const std::string pname = nb::cast<std::string>(t[0]);
      std::vector<Value> values;
      for (auto v : t[1]) values.push_back(to_value(v, pname));
      space.param(pname, std::move(values));
    }
    if (!spec["listed"].is_none()) {
      auto listed = std::make_shared<std::set<std::string>>();
      for (auto c : spec["listed"]) listed->insert(to_config(c).to_string());
      space.constraint("listed",
                       [listed](const Config& c) { return listed->count(c.to_string()) > 0; });
    }
    hooks_.config_cls = spec["config_cls"];
    for (auto item : nb::borrow<nb::list>(spec["constraints"])) {
      nb::tuple t = nb::borrow<nb::tuple>(item);
      nb::object fn = nb::borrow(t[1]);
      hooks_.constraints.push_back(fn);
      PyObject* f = fn.ptr();
      Hooks* hooks = &hooks_;
      space.constraint(nb::cast<std::string>(t[0]), [hooks, f](const Config& c) {
        GilAcquire gil;
        HookScope scope(hooks);
        nb::dict kw;
        for (const auto& [k, v] : c.values()) kw[k.c_str()] = from_value(v);
        nb::object verdict;
        try {
          verdict = calling_python([&] { return nb::handle(f)(kw); });
        } catch (nb::python_error& e) {
          throw hook_error("a constraint", e, hooks->pending.get());
        }
        // Truthiness, as Python's `if` reads it: a constraint may return
        // None, 0/1 or a numpy bool (nb::cast<bool> takes only True/False
        // and throws a bare std::bad_cast for the rest).
        const int truth = PyObject_IsTrue(verdict.ptr());
        if (truth < 0) {
          nb::python_error e;
          throw hook_error("a constraint's result", e, hooks->pending.get());
        }
        return truth == 1;
      });
    }
    if (!spec["default"].is_none()) space.default_config(to_config(spec["default"]));

    // Launch rule.
    hooks_.grid = spec["grid"];
    hooks_.block = spec["block"];
    hooks_.shared_bytes = spec["shared_bytes"];
    hooks_.constant_geometry = !PyCallable_Check(hooks_.grid.ptr()) &&
                               !PyCallable_Check(hooks_.block.ptr()) &&
                               !PyCallable_Check(hooks_.shared_bytes.ptr());
    if (hooks_.constant_geometry) {
      hooks_.constant_geometry = false;  // evaluate once, through the general path
      hooks_.constant = hooks_.geometry(Config{}, nb::dict());
      hooks_.constant_geometry = true;
    }
    Hooks* h = &hooks_;
    kernel_.launch = [h](const Config& c, const ArgList&) {
      if (h->constant_geometry) return h->constant;
      GilAcquire gil;
      HookScope scope(h);
      LaunchGeometry g;
      try {
        g = h->geometry(c, h->named);
      } catch (nb::python_error& e) {  // an interrupt (geometry names the rest)
        throw hook_error("the launch rule", e, h->pending.get());
      }
      // Timing a launch over no blocks would make this config the fastest.
      if (empty_grid(g.grid))
        throw Error(ErrorCode::kInvalidArgument,
                    "grid(meta) gives no blocks for this config (" + c.to_string() +
                        ") where the space's default config has some: nothing would run");
      return g;
    };

    // Lists of arguments, each checked against the signature.
    auto names_of = [&](const char* field) {
      std::vector<std::string> out = nb::cast<std::vector<std::string>>(spec[field]);
      for (const auto& n : out) check_name(n, field);
      return out;
    };
    kernel_.outputs = names_of("outputs");
    kernel_.restore_value = names_of("restore_value");
    kernel_.reset_to_zero = names_of("reset_to_zero");
    // What Kiln itself writes: a read-only array there is refused, not written.
    // (outputs are only compared, and by default every tensor, inputs too.)
    const std::pair<const std::vector<std::string>*, const char*> written[] = {
        {&kernel_.restore_value, "restore_value"}, {&kernel_.reset_to_zero, "reset_to_zero"}};
    for (const auto& [names, role] : written)
      for (const auto& n : *names)
        for (std::size_t i = 0; i < params_.size(); ++i) {
          if (params_[i].name != n) continue;
          if (params_[i].read_only)
            throw Error(ErrorCode::kInvalidArgument,
                        std::string(role) + " names '" + n + "', which the signature of " + name_ +
                            " declares const " + params_[i].type_text +
                            " (read-only), but Kiln writes it there: drop it from " + role +
                            ", or the const if the kernel writes it");
          written_.push_back({i, role});
        }
    const auto key = names_of("key");
    key_names_ = key;
    key_mask_.assign(params_.size(), false);
    for (std::size_t i = 0; i < params_.size(); ++i) {
      for (const auto& k : key) key_mask_[i] = key_mask_[i] || k == params_[i].name;
    }

    // Pruning (Triton's prune_configs_by).
    hooks_.perf_model = spec["perf_model"];
    hooks_.early_config_prune = spec["early_config_prune"];
    if (!hooks_.perf_model.is_none()) {
      kernel_.perf_model = [h](const Config& c, const ProblemKey&) {
        GilAcquire gil;
        HookScope scope(h);
        nb::dict kw;
        for (auto [k, v] : h->named) kw[k] = v;
        for (const auto& [k, v] : c.values()) kw[k.c_str()] = from_value(v);
        nb::object r = nb::steal(calling_python(
            [&] { return PyObject_Call(h->perf_model.ptr(), nb::tuple().ptr(), kw.ptr()); }));
        if (!r.is_valid()) {
          nb::python_error e;
          throw hook_error("perf_model", e, h->pending.get());
        }
        const double seconds = PyFloat_AsDouble(r.ptr());
        const bool not_a_number = seconds == -1.0 && PyErr_Occurred();
        if (not_a_number) PyErr_Clear();
        // NOTES: a NaN would reach the ranking's sort, whose comparison it
        // breaks (undefined behaviour); an infinity ranks nothing either.
        if (not_a_number || !std::isfinite(seconds)) {
          throw Error(ErrorCode::kInvalidArgument,
                      "perf_model returned " + nb::cast<std::string>(nb::repr(r)) +
                          " for the config " + c.to_string() +
                          ": it returns the estimated time of a config, a finite number");
        }
        return seconds;
      };
      const double top_k = nb::cast<double>(spec["top_k"]);
      kernel_.top_k =
          top_k < 1 ? static_cast<std::size_t>(std::ceil(
                          top_k * static_cast<double>(std::max<std::uint64_t>(space.size(), 1))))
                    : static_cast<std::size_t>(top_k);
    }
    if (!hooks_.early_config_prune.is_none()) {
      kernel_.early_prune = [h](const Config& c, const ProblemKey&) {
        return !h->has_kept || h->kept.count(c.to_string()) > 0;
      };
    }
    hooks_.reference = spec["reference"];

    // Options.
    TuneOptions& o = options_;
    o.search.strategy = nb::cast<std::string>(spec["search"]);
    if (!spec["max_configs"].is_none())
      o.search.max_configs = static_cast<std::size_t>(int64_of(spec["max_configs"], "max_configs"));
    if (!spec["budget_s"].is_none()) o.pipeline.budget_seconds = nb::cast<double>(spec["budget_s"]);
    if (!spec["deadline_s"].is_none()) {
      o.pipeline.bench_deadline_seconds = nb::cast<double>(spec["deadline_s"]);
    }
    if (!spec["warmup"].is_none()) o.measure.warmup = nb::cast<int>(spec["warmup"]);
    if (!spec["rep"].is_none()) o.measure.target_seconds = nb::cast<double>(spec["rep"]) / 1000.0;
    o.check.enabled = nb::cast<bool>(spec["check"]);
    if (!spec["rtol"].is_none() || !spec["atol"].is_none()) {
      Tolerance t;
      if (!spec["rtol"].is_none()) t.rtol = nb::cast<double>(spec["rtol"]);
      if (!spec["atol"].is_none()) t.atol = nb::cast<double>(spec["atol"]);
      o.check.tolerance = t;
    }
    if (!hooks_.reference.is_none()) {
      o.check.reference = ReferenceKind::kUser;
      o.check.reference_fn = [h](Device&, const ArgList& args) -> Status {
        GilAcquire gil;
        HookScope scope(h);
        try {
          nb::list views;
          for (const Arg& a : args) views.append(arg_view(a));
          calling_python([&] { return h->reference(*nb::tuple(views)); });
        } catch (nb::python_error& e) {
          return hook_error("reference", e, h->pending.get()).info();
        } catch (const Error& e) {
          return e.info();
        }
        return ok_status();
      };
    }
    // Checks the space now: a placeholder naming no parameter, an empty
    // space, a default outside it, each named (kiln.ConfigError).
    kernel_.tmpl.check();
  }

  void check_name(const std::string& n, const char* field) const {
    for (const auto& p : params_) {
      if (p.name == n) return;
    }
    std::string names;
    for (const auto& p : params_) names += (names.empty() ? "" : ", ") + p.name;
    throw Error(ErrorCode::kInvalidArgument, std::string(field) + " names '" + n +
                                                 "', which is not a parameter of " + name_ +
                                                 " (its signature has " + names + ")");
  }

  BackendKind kind_from(const CallArgs& ca) const {
    if (backend_ == "auto") return ca.any_tensor ? ca.device.kind : parse_backend("auto");
    const BackendKind kind = parse_backend(backend_);
    if (ca.any_tensor && ca.device.kind != kind) {
      throw Error(ErrorCode::kInvalidArgument,
                  name_ + " is a " + backend_ + " kernel but its tensors are on " +
                      ca.device.to_string() + ": move them, or declare backend=\"" +
                      device_kind_name(ca.device.kind) + "\"");
    }
    return kind;
  }

  nb::dict named_args(nb::handle args) const {
    nb::dict d;
    for (std::size_t i = 0; i < names_.size(); ++i) d[names_[i].c_str()] = args[i];
    return d;
  }

  // The key's values as a tuple: scalars as given, tensors as their shape.
  nb::tuple key_tuple(const CallArgs& ca) const {
    nb::list out;
    for (std::size_t i = 0; i < params_.size(); ++i) {
      bool in = false;
      for (const auto& k : key_names_) in = in || k == params_[i].name;
      if (!in) continue;
      const Arg& a = ca.args[i];
      if (a.is_tensor) {
        nb::list shape;
        for (auto d : a.tensor.shape) shape.append(d);
        out.append(nb::tuple(shape));
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
      t_.hooks_.pending = std::make_shared<PendingInterrupt>();
    }
    ~TuningRun() {
      t_.hooks_.pending.reset();
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
      hooks_.pending->raise_if_pending();
      throw;
    }
  }

  std::shared_ptr<Entry> tune_locked(CallArgs& ca, nb::dict named) {
    hooks_.named = named;
    hooks_.has_kept = false;
    if (!hooks_.early_config_prune.is_none()) {
      nb::list configs;
      for (const Config& c : kernel_.tmpl.space.enumerate()) configs.append(hooks_.py_config(c));
      nb::object kept;
      try {
        kept = calling_python([&] { return hooks_.early_config_prune(configs, named); });
      } catch (nb::python_error& e) {
        throw hook_error("early_config_prune", e, nullptr);  // this thread: an interrupt as itself
      }
      hooks_.kept.clear();
      if (!nb::isinstance<nb::list>(kept) && !nb::isinstance<nb::tuple>(kept)) {
        throw Error(ErrorCode::kInvalidArgument,
                    "early_config_prune returned " + nb::cast<std::string>(nb::repr(kept)) +
                        ": it returns the list of configs to keep (kiln.Config or dicts)");
      }
      for (auto c : kept) {
        nb::object params;
        if (nb::isinstance(c, hooks_.config_cls)) {
          params = c.attr("kwargs");
        } else if (nb::isinstance<nb::dict>(c)) {
          params = nb::borrow(c);
        } else {
          throw Error(ErrorCode::kInvalidArgument,
                      "early_config_prune returned a list holding " +
                          nb::cast<std::string>(nb::repr(c)) +
                          ": each item is a kiln.Config (or a dict of parameters)");
        }
        hooks_.kept.insert(to_config(params).to_string());
      }
      hooks_.has_kept = true;
    }
    Result<TuneResult> r = make_error(ErrorCode::kInternal, "not tuned");
    // Ctrl-C stops the run: the tuner asks, on this thread, while it waits
    // on its workers; Python runs the SIGINT handler (KeyboardInterrupt, or
    // the user's own) there. The exception is taken out of the thread's
    // error indicator at once, so no later hook call meets it, and raised
    // when the tuner has returned (kCancelled: nothing saved). An interrupt
    // a hook raised (Hooks::pending) stops the run the same way.
    std::shared_ptr<PendingInterrupt> pending = hooks_.pending;
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
      r = rt_->tuner->tune(kernel_, ca.args, rt_->device(), options);
    }
    pending->raise_if_pending();
    // NOTES: a signal that came after the last check is raised here, not
    // inside the first Python call below (which would make it a SystemError).
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    if (!r.ok()) raise(r.error());
    stats_.merge(r->stats);
    auto e = std::make_shared<Entry>();
    e->result = std::move(*r);
    e->config = hooks_.py_config(e->result.config);
    const nb::tuple key = key_tuple(ca);
    nb::list ms;
    for (const Measurement& m : e->result.measurements)
      ms.append(timing_dict(m, hooks_.py_config(m.config)));
    if (e->result.source == ResultSource::kTuned || !measured_.contains(key)) measured_[key] = ms;
    sources_[key] = source_name(e->result.source);
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
                   name_ + ": no config ran correctly for the key " +
                       nb::cast<std::string>(nb::repr(key)) + " (" +
                       std::to_string(r.measurements.size()) + " tried" + skipped + "):" + lines +
                       "\nfix the kernel or widen the space; check=False skips the output check",
                   {}};
    info.details["kind"] = "no_valid_config";
    info.details["failures_json"] = failures.dump();
    raise(info);
  }

  std::string name_, backend_;
  TunableKernel kernel_;
  TuneOptions options_;
  std::vector<Param> params_;
  std::vector<std::string> names_, key_names_;
  std::vector<bool> key_mask_;
  std::vector<std::pair<std::size_t, const char*>> written_;  // argument index, why Kiln writes it
  Hooks hooks_;
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
