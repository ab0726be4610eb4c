// The framework tuning API (FlashInfer's, TensorRT-LLM's) over Kiln's
// TacticTuner: Python runners behind a TunableRunner trampoline,
// choose_one with dynamic-shape buckets, and the per-thread tuning and
// skip scopes.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <mutex>
#include <set>

#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/log.hpp"
#include "kiln/core/options.hpp"
#include "kiln/framework/choose_one.hpp"
#include "kiln/framework/dynamic_shapes.hpp"
#include "kiln/framework/runner.hpp"
#include "kiln/framework/tuning_file.hpp"
#include "kiln/framework/tuning_scope.hpp"
#include "py_args.hpp"
#include "py_errors.hpp"
#include "py_gil.hpp"
#include "py_hooks.hpp"
#include "py_runtime.hpp"

namespace nb = nanobind;

namespace kiln::py {

namespace {

// The inputs as a runner sees them (arg_view each).
nb::list views(const ArgList& args) {
  nb::list out;
  for (const Arg& a : args) out.append(arg_view(a));
  return out;
}

nb::list shapes(const ArgList& args) {
  nb::list out;
  for (const Arg& a : args) {
    nb::list s;
    if (a.is_tensor) {
      for (auto d : a.tensor.shape) s.append(d);
    }
    out.append(nb::tuple(s));
  }
  return out;
}

// KeyboardInterrupt or SystemExit raised in a runner, on its way out of the
// tuner: the Python exception waits in this thread's error indicator. Not a
// std::exception on purpose: the tuner records those as the tactic's
// failure; this one it cannot catch, so no decision is made or saved.
struct Interrupted {};

// KeyboardInterrupt and SystemExit are the user stopping the program, not
// a tactic failing: they leave choose_one at once.
void rethrow_interrupt(nb::python_error& e) {
  if (!is_interrupt(e)) return;
  e.restore();
  throw Interrupted{};
}

Status python_failure(const std::string& runner, const char* what, nb::python_error& e) {
  rethrow_interrupt(e);
  return make_error(ErrorCode::kLaunchFailed,
                    runner + "." + what + " raised " + describe_exception(e));
}

// A Python kiln.Runner as Kiln's TunableRunner. Every call takes the GIL:
// the tuner calls runners from the thread that called choose_one, which
// released it.
class PyRunner final : public TunableRunner {
 public:
  PyRunner(nb::object runner, std::string name, std::string version)
      : TunableRunner(std::move(name), std::move(version)), runner_(std::move(runner)) {}

  std::vector<int> tactics(const ArgList& in) override {
    GilAcquire gil;
    try {
      nb::object r =
          calling_python([&] { return runner_.attr("get_valid_tactics")(views(in), shapes(in)); });
      std::vector<int> out;
      for (auto t : r) {
        int tactic = 0;
        if (nb::isinstance<nb::bool_>(t) || !nb::try_cast(t, tactic, true)) {
          log_once(LogLevel::kWarn, "py-tactics-type-" + id().text(),
                   id().text() + ".get_valid_tactics returned the tactic " +
                       nb::cast<std::string>(nb::repr(t)) +
                       ": tactics are ints (32-bit); only the fallback runs");
          return {};
        }
        out.push_back(tactic);
      }
      return out;
    } catch (nb::python_error& e) {
      rethrow_interrupt(e);
      log_once(LogLevel::kWarn, "py-tactics-" + id().text(),
               id().text() + ".get_valid_tactics raised " + describe_exception(e) +
                   ": only the fallback runs");
      return {};
    }
  }

  Status run(const ArgList& in, int tactic) override {
    GilAcquire gil;
    try {
      calling_python([&] {
        return runner_.attr("forward")(views(in), nb::arg("tactic") = tactic,
                                       nb::arg("do_preparation") = false);
      });
    } catch (nb::python_error& e) {
      return python_failure(id().text(), "forward", e);
    }
    return ok_status();
  }

  Status prepare(const ArgList& in, std::span<const int> tactics) override {
    GilAcquire gil;
    try {
      nb::list v = views(in);
      for (int t : tactics) {
        calling_python([&] {
          return runner_.attr("forward")(v, nb::arg("tactic") = t,
                                         nb::arg("do_preparation") = true);
        });
      }
    } catch (nb::python_error& e) {
      return python_failure(id().text(), "forward(do_preparation=True)", e);
    }
    return ok_status();
  }

 private:
  nb::object runner_;
};

struct Framework {
  std::unique_ptr<TuningCache> cache;
  std::unique_ptr<TacticTuner> tuner;
};

Framework& framework() {
  static Framework* f = [] {
    auto* fw = new Framework();
    fw->cache = std::make_unique<TuningCache>(Options::global());
    TacticTunerOptions o;
    o.cache = fw->cache.get();
    fw->tuner = std::make_unique<TacticTuner>(o);
    return fw;
  }();
  return *f;
}

// A runner for one call: nothing outlives it, so a runner the caller drops
// is freed (the tuner keys its decisions on names and versions, not
// objects).
std::unique_ptr<PyRunner> native_runner(nb::handle runner) {
  if (!nb::hasattr(runner, "get_valid_tactics") || !nb::hasattr(runner, "forward")) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("choose_one got a ") + nb::inst_name(runner).c_str() +
                    ", not a runner: subclass kiln.Runner (get_valid_tactics and forward)");
  }
  nb::object name_obj = runner.attr("name");
  if (!nb::isinstance<nb::str>(name_obj)) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("runner ") + nb::inst_name(runner).c_str() + " has the name " +
                    nb::cast<std::string>(nb::repr(name_obj)) +
                    ": a runner's name is a str (it keys the tuning cache)");
  }
  const std::string name = nb::cast<std::string>(name_obj);
  // str() of the version: a version may be given as 2 or "2".
  const std::string version = nb::str(nb::handle(runner.attr("version"))).c_str();
  return std::make_unique<PyRunner>(nb::borrow(runner), name, version);
}

// An index of a spec (DynamicDim.input, a constraint's dim), named when it
// is negative or beyond 64 bits (not a bare std::bad_cast).
std::size_t index_of(nb::handle v, const std::string& what) {
  const std::int64_t i = int64_of(v, what);
  if (i < 0) {
    throw Error(ErrorCode::kInvalidArgument,
                what + " is " + std::to_string(i) + ": give an index, an int from 0");
  }
  return static_cast<std::size_t>(i);
}

// A TuningSpec built once per distinct Python description (cached by the
// Python side).
class Spec {
 public:
  Spec(nb::list dynamic, nb::list constraints, std::int64_t max_bucket) {
    for (auto d : dynamic) {
      std::vector<std::int64_t> buckets;
      for (auto b : d.attr("buckets")) buckets.push_back(int64_of(b, "a DynamicDim bucket"));
      DynamicDim dim =
          DynamicDim::of(index_of(d.attr("input"), "DynamicDim input"),
                         index_of(d.attr("dim"), "DynamicDim dim"), std::move(buckets));
      nb::object map = d.attr("map");
      if (!map.is_none()) {
        keep_.push_back(map);
        PyObject* f = map.ptr();
        const std::string what = "the map of DynamicDim(input=" + std::to_string(dim.input) +
                                 ", dim=" + std::to_string(dim.dim) + ")";
        dim.map = [f, what](std::int64_t size) {
          return call_sized(f, size, what, "the size " + std::to_string(size));
        };
      }
      spec_.dynamic.push_back(std::move(dim));
    }
    for (auto c : constraints) {
      nb::tuple t = nb::borrow<nb::tuple>(c);
      nb::object fn = nb::borrow(t[2]);
      keep_.push_back(fn);
      PyObject* f = fn.ptr();
      spec_.constraints.push_back(
          {index_of(t[0], "a constraint's input"), index_of(t[1], "a constraint's dim"),
           [f](std::span<const std::int64_t> profile) {
             GilAcquire gil;
             nb::list p;
             std::string given = "the profile (";
             for (auto v : profile) {
               given += (p.size() ? ", " : "") + std::to_string(v);
               p.append(v);
             }
             return call_sized(f, nb::tuple(p), "a constraint of choose_one", given + ")");
           }});
    }
    spec_.max_bucket = max_bucket;
    spec_.finalize();
  }
  const TuningSpec& spec() const { return spec_; }

 private:
  TuningSpec spec_;
  std::vector<nb::object> keep_;
};

// Inputs without a signature: tensors by DLPack, scalars by their Python
// type, named in0, in1, ...
ArgList framework_inputs(nb::handle inputs) {
  ArgList out;
  const std::size_t n = nb::len(inputs);
  std::vector<KernelParam> params(n);
  nb::list items;
  for (std::size_t i = 0; i < n; ++i) {
    nb::handle obj = inputs[i];
    KernelParam& p = params[i];
    p.name = "in" + std::to_string(i);
    if (nb::isinstance<nb::bool_>(obj)) {
      p.kind = KernelParam::Kind::kScalar;
      p.scalar = ArgType::kBool;
      p.type_text = "bool";
    } else if (nb::isinstance<nb::int_>(obj)) {
      p.kind = KernelParam::Kind::kScalar;
      p.scalar = ArgType::kI64;
      p.type_text = "i64";
    } else if (nb::isinstance<nb::float_>(obj)) {
      p.kind = KernelParam::Kind::kScalar;
      p.scalar = ArgType::kF64;
      p.type_text = "f64";
    } else {
      p.kind = KernelParam::Kind::kTensor;
      nb::ndarray<nb::ro> arr;
      if (!nb::try_cast(obj, arr, false)) {
        throw Error(ErrorCode::kInvalidArgument, "choose_one: input " + std::to_string(i) +
                                                     " is a " + nb::inst_name(obj).c_str() +
                                                     ": pass tensors (DLPack) and numbers");
      }
      // The signature's dtype is the tensor's own.
      using C = nb::dlpack::dtype_code;
      const auto dt = arr.dtype();
      const auto code = static_cast<C>(dt.code);
      const std::string name = dt.lanes != 1       ? "vector"
                               : code == C::Float  ? "f" + std::to_string(dt.bits)
                               : code == C::Bfloat ? "bf16"
                               : code == C::Int    ? "i" + std::to_string(dt.bits)
                               : code == C::UInt   ? "u" + std::to_string(dt.bits)
                               : code == C::Bool   ? "bool"
                                                   : "complex";
      try {
        p.dtype = parse_dtype(name);
      } catch (const Error&) {
        throw Error(ErrorCode::kInvalidArgument, "choose_one: input " + std::to_string(i) +
                                                     " has dtype " + name +
                                                     ", which Kiln does not handle: convert it "
                                                     "(f16, bf16, f32, f64, i8, u8, i16, i32, "
                                                     "i64 or bool)");
      }
      p.type_text = name + "*";
    }
  }
  return convert_args(params, {}, inputs, "choose_one", {}, {}, /*inferred=*/true).args;
}

// One kiln.tuning() block: its switch, its skip set (the outer block's and
// its own) and the file its decisions go to (its own, else the outer
// block's). framework.py keeps the innermost in a contextvar, so each
// thread and each asyncio task sees its own blocks, left in any order;
// choose_here applies it for the length of one call.
class Scope {
 public:
  Scope(bool tune, std::vector<std::string> skip, std::optional<std::string> cache,
        std::optional<int> rank, const Scope* outer)
      : tune_(tune) {
    if (outer) {
      skip_ = outer->skip_;
      file_ = outer->file_;
    }
    skip_.insert(skip.begin(), skip.end());
    if (cache) {
      // Without the GIL: attaching and detaching take the tuner's lock,
      // which a thread deciding in choose_one holds while it waits for the
      // GIL to call a runner (a deadlock seen in the test suite).
      GilRelease release;
      file_ = std::make_shared<TuningFile>(*framework().tuner, *cache, rank);
      owns_file_ = true;
    }
  }
  void close() {
    if (!owns_file_) return;
    GilRelease release;
    file_->close();  // an inner block still holding it no longer records into it
  }
  std::string file() const { return owns_file_ ? file_->path().string() : std::string(); }
  bool tune() const { return tune_; }
  std::vector<std::string> skipped() const { return {skip_.begin(), skip_.end()}; }

  TuningScopeOptions options() const {
    TuningScopeOptions o;
    o.tune = tune_;
    o.skip = skipped();
    o.borrowed_cache = file_ ? file_->cache() : nullptr;
    return o;
  }

 private:
  bool tune_;
  std::set<std::string> skip_;
  std::shared_ptr<TuningFile> file_;
  bool owns_file_ = false;
};

// choose_one on this thread (the bound _choose_one).
nb::tuple choose_here(const std::string& op, nb::list runners, nb::handle inputs, const Spec& spec,
                      const Scope* scope) {
  // The caller's kiln.tuning() block, on this thread for this call only.
  std::optional<TuningScope> in_scope;
  if (scope) in_scope.emplace(*framework().tuner, scope->options());
  std::vector<std::unique_ptr<PyRunner>> owned;
  std::vector<TunableRunner*> native;
  for (auto r : runners) native.push_back(owned.emplace_back(native_runner(r)).get());
  if (native.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "choose_one(\"" + op + "\") got no runners: give at least one");
  }
  ArgList in = framework_inputs(inputs);
  Choice c;
  try {
    GilRelease release;
    c = framework().tuner->choose_one(op, native, in, spec.spec());
  } catch (const Interrupted&) {
    throw nb::python_error();  // the KeyboardInterrupt a runner raised
  }
  return nb::make_tuple(runners[c.runner_index], c.tactic, choice_source_name(c.source));
}

}  // namespace

void register_framework(nb::module_& m) {
  nb::class_<Spec>(m, "_Spec", nb::dynamic_attr())
      .def(nb::init<nb::list, nb::list, std::int64_t>(), nb::arg("dynamic"), nb::arg("constraints"),
           nb::arg("max_bucket"));

  nb::class_<Scope>(m, "_Scope")
      .def(nb::init<bool, std::vector<std::string>, std::optional<std::string>, std::optional<int>,
                    const Scope*>(),
           nb::arg("tune"), nb::arg("skip"), nb::arg("cache").none(), nb::arg("rank").none(),
           nb::arg("outer").none())
      .def("close", &Scope::close)
      .def_prop_ro("file", &Scope::file)
      .def_prop_ro("tune", &Scope::tune)
      .def_prop_ro("skipped", &Scope::skipped);

  m.def(
      "_choose_one",
      [](const std::string& op, nb::list runners, nb::handle inputs, const Spec& spec,
         const Scope* scope) {
        // Runners run on this thread: see calling_python.
        return calling_python([&] { return choose_here(op, runners, inputs, spec, scope); });
      },
      nb::arg("op"), nb::arg("runners"), nb::arg("inputs"), nb::arg("spec"),
      nb::arg("scope").none());

  m.def("_framework_stats", [] {
    const TacticStats s = framework().tuner->stats();
    nb::dict d;
    d["disk_hits"] = s.disk_hits;
    d["tuned_profiles"] = s.tuned_profiles;
    d["profiled"] = s.profiled;
    d["failed"] = s.failed;
    d["fallbacks"] = s.fallbacks;
    d["skipped"] = s.skipped;
    d["stale"] = s.stale;
    return d;
  });
  m.def("_framework_clear_memory", [] { framework().tuner->clear_memory(); });
}

TacticTuner& framework_tuner() {
  return *framework().tuner;
}

}  // namespace kiln::py
