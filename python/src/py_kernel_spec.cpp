// A kernel spec read into the native kernel: see py_kernel_spec.hpp.
#include "py_kernel_spec.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "py_launch.hpp"
#include "py_runtime.hpp"

namespace nb = nanobind;

namespace kiln::py {

namespace {

// The template and the signature (the one parser, as a JSON spec's).
void read_template(nb::dict spec, KernelSpec& ks) {
  KernelTemplate& tmpl = ks.desc.tmpl;
  tmpl.name = nb::cast<std::string>(spec["name"]);
  tmpl.source = nb::cast<std::string>(spec["source"]);
  tmpl.entry = nb::cast<std::string>(spec["entry"]);
  tmpl.options = nb::cast<std::vector<std::string>>(spec["options"]);
  for (auto [k, v] : nb::borrow<nb::dict>(spec["headers"]))
    tmpl.headers.push_back(Header{nb::cast<std::string>(k), nb::cast<std::string>(v)});
  ks.kernel.version = nb::cast<std::string>(spec["version"]);
  ks.backend = nb::cast<std::string>(spec["backend"]);
  ks.desc.signature = parse_signature(nb::cast<std::vector<std::string>>(spec["signature"]));
}

// The space: each parameter's values, the listed configs, the constraints
// (Python callables), the default.
void read_space(nb::dict spec, KernelSpec& ks) {
  ConfigSpace& space = ks.desc.tmpl.space;
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
  ks.hooks.config_cls = spec["config_cls"];
  for (auto item : nb::borrow<nb::list>(spec["constraints"])) {
    nb::tuple t = nb::borrow<nb::tuple>(item);
    nb::object fn = nb::borrow(t[1]);
    ks.hooks.constraints.push_back(fn);
    PyObject* f = fn.ptr();
    Hooks* hooks = &ks.hooks;
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
}

// The launch rule: grid, block and shared_bytes, constant or callables of
// meta (evaluated once when none is callable).
void read_launch_rule(nb::dict spec, KernelSpec& ks) {
  ks.hooks.grid = spec["grid"];
  ks.hooks.block = spec["block"];
  ks.hooks.shared_bytes = spec["shared_bytes"];
  ks.hooks.constant_geometry = !PyCallable_Check(ks.hooks.grid.ptr()) &&
                               !PyCallable_Check(ks.hooks.block.ptr()) &&
                               !PyCallable_Check(ks.hooks.shared_bytes.ptr());
  if (ks.hooks.constant_geometry) {
    ks.hooks.constant_geometry = false;  // evaluate once, through the general path
    ks.hooks.constant = ks.hooks.geometry(Config{}, nb::dict());
    ks.hooks.constant_geometry = true;
  }
  Hooks* h = &ks.hooks;
  ks.kernel.launch = [h](const Config& c, const ArgList&) {
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
}

// outputs, restore_value, reset_to_zero (the description's builder
// step, as a JSON spec's) and key, each checked against the signature;
// what Kiln writes may not be declared const.
void read_argument_lists(nb::dict spec, KernelSpec& ks) {
  using Names = std::vector<std::string>;
  const auto outputs = nb::cast<std::optional<Names>>(spec["outputs"]);
  // Named outputs the kernel writes, const or not (convert_args refuses an
  // immutable array there); the default list is only what is compared.
  if (outputs)
    for (const auto& p : ks.params())
      ks.named_outputs.push_back(std::count(outputs->begin(), outputs->end(), p.name) > 0);
  describe_tensor_lists(ks.desc, outputs, nb::cast<Names>(spec["restore_value"]),
                        nb::cast<Names>(spec["reset_to_zero"]));
  ks.kernel.tmpl = ks.desc.tmpl;
  ks.kernel.outputs = ks.desc.outputs;
  ks.kernel.restore_value = ks.desc.restore_value;
  ks.kernel.reset_to_zero = ks.desc.reset_to_zero;
  // What Kiln itself writes: a read-only array there is refused, not written.
  // (outputs are only compared.)
  const std::pair<const Names*, const char*> written[] = {
      {&ks.kernel.restore_value, "restore_value"}, {&ks.kernel.reset_to_zero, "reset_to_zero"}};
  for (const auto& [names, role] : written)
    for (const auto& n : *names)
      for (std::size_t i = 0; i < ks.params().size(); ++i) {
        const KernelParam& p = ks.params()[i];
        if (p.name != n) continue;
        if (p.read_only)
          throw Error(ErrorCode::kInvalidArgument,
                      std::string(role) + " names '" + n + "', which the signature of " +
                          ks.name() + " declares const " + p.type_text +
                          " (read-only), but Kiln writes it there: drop it from " + role +
                          ", or the const if the kernel writes it");
        ks.written.push_back({i, role});
      }
  ks.key_names = nb::cast<Names>(spec["key"]);
  check_parameter_names(ks.desc, ks.key_names, "key", ParamKinds::kAny);
  for (const auto& p : ks.params())
    ks.key_mask.push_back(std::count(ks.key_names.begin(), ks.key_names.end(), p.name) > 0);
}

// Pruning (Triton's prune_configs_by): perf_model with top_k, and
// early_config_prune.
void read_pruning(nb::dict spec, KernelSpec& ks) {
  Hooks* h = &ks.hooks;
  ConfigSpace& space = ks.kernel.tmpl.space;
  ks.hooks.perf_model = spec["perf_model"];
  ks.hooks.early_config_prune = spec["early_config_prune"];
  if (!ks.hooks.perf_model.is_none()) {
    ks.kernel.perf_model = [h](const Config& c, const ProblemKey&) {
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
    ks.kernel.top_k =
        top_k < 1 ? static_cast<std::size_t>(std::ceil(
                        top_k * static_cast<double>(std::max<std::uint64_t>(space.size(), 1))))
                  : static_cast<std::size_t>(top_k);
  }
  if (!ks.hooks.early_config_prune.is_none()) {
    ks.kernel.early_prune = [h](const Config& c, const ProblemKey&) {
      return !h->has_kept || h->kept.count(c.to_string()) > 0;
    };
  }
  ks.hooks.reference = spec["reference"];
}

}  // namespace

// The key's bucket rules ((name, dim or None, buckets, map or None) each,
// python/kiln/autotune.py): a dim of a tensor, or an integer scalar of the key.
void read_buckets(nb::dict spec, KernelSpec& ks) {
  if (!spec.contains("buckets")) return;
  for (auto item : nb::borrow<nb::list>(spec["buckets"])) {
    nb::tuple t = nb::borrow<nb::tuple>(item);
    KeyBucket b{nb::cast<std::string>(t[0]), std::nullopt, {}};
    if (!t[1].is_none()) b.dim = static_cast<std::size_t>(int64_of(t[1], "a key bucket's dim"));
    for (auto v : t[2]) b.rule.buckets.push_back(int64_of(v, "a bucket of key '" + b.arg + "'"));
    if (!t[3].is_none()) {
      ks.keep.push_back(nb::borrow(t[3]));
      PyObject* f = t[3].ptr();
      b.rule.map = [f, what = "the bucket rule on '" + b.name() + "'"](std::int64_t size) {
        return call_sized(f, size, what, "the size " + std::to_string(size));
      };
    }
    ks.kernel.buckets.push_back(std::move(b));
  }
  ks.buckets.assign(ks.params().size(), {});
  for (const KeyBucket& b : ks.kernel.buckets) {
    auto p = std::find_if(ks.params().begin(), ks.params().end(),
                          [&](const KernelParam& q) { return q.name == b.arg; });
    const bool integer = p != ks.params().end() && p->kind == KernelParam::Kind::kScalar &&
                         p->scalar != ArgType::kBool && p->scalar != ArgType::kF32 &&
                         p->scalar != ArgType::kF64;
    const bool tensor = p != ks.params().end() && p->kind == KernelParam::Kind::kTensor;
    if (b.dim ? !tensor : !integer) {
      throw Error(ErrorCode::kInvalidArgument,
                  "key={'" + b.arg + "': ...}: " + ks.name() +
                      (p == ks.params().end() ? " has no argument of that name"
                                              : " declares it " + p->type_text) +
                      "; bucket an integer scalar (key={'n': buckets}) or a tensor's dims "
                      "(key={'x': {0: buckets}})");
    }
    ks.buckets[p - ks.params().begin()].push_back({b.dim ? static_cast<int>(*b.dim) : -1, &b});
  }
}

void read_kernel_spec(nb::dict spec, KernelSpec& ks) {
  read_template(spec, ks);
  read_space(spec, ks);
  read_launch_rule(spec, ks);
  read_argument_lists(spec, ks);
  read_pruning(spec, ks);
  read_buckets(spec, ks);
}

// The search and measurement knobs beyond Triton's (checked in autotune.py;
// None keeps the C++ default).
namespace {
void read_measure_options(nb::dict spec, TuneOptions& o) {
  auto given = [&](const char* name) { return spec.contains(name) && !spec[name].is_none(); };
  auto count = [&](const char* name) {
    return static_cast<std::size_t>(int64_of(spec[name], name));
  };
  if (given("effort"))
    o.search.effort = *parse_search_effort(nb::cast<std::string>(spec["effort"]));
  if (given("warm_start")) o.search.warm_start = count("warm_start");
  if (given("finalists")) o.search.finalists = count("finalists");
  if (given("min_reps")) o.measure.min_reps = static_cast<int>(count("min_reps"));
  if (given("max_reps")) o.measure.max_reps = static_cast<int>(count("max_reps"));
  if (given("early_stop")) o.measure.early_stop = nb::cast<double>(spec["early_stop"]);
  if (given("delay_us")) o.measure.delay_us = nb::cast<double>(spec["delay_us"]);
  if (given("compile_deadline_s"))
    o.pipeline.compile_deadline_seconds = nb::cast<double>(spec["compile_deadline_s"]);
  if (given("cold_cache")) o.measure.cold_l2 = nb::cast<bool>(spec["cold_cache"]);
  if (given("cuda_graph")) o.measure.graphs = nb::cast<bool>(spec["cuda_graph"]);
}
}  // namespace

// The tuning options: search, budget, timing, the output check (with the
// user's reference, a hook).
TuneOptions read_tune_options(nb::dict spec, KernelSpec& ks) {
  Hooks* h = &ks.hooks;
  TuneOptions o;
  o.search.strategy = nb::cast<std::string>(spec["search"]);
  if (!spec["max_configs"].is_none())
    o.search.max_configs = static_cast<std::size_t>(int64_of(spec["max_configs"], "max_configs"));
  if (!spec["budget_s"].is_none()) o.pipeline.budget_seconds = nb::cast<double>(spec["budget_s"]);
  if (!spec["deadline_s"].is_none()) {
    o.pipeline.bench_deadline_seconds = nb::cast<double>(spec["deadline_s"]);
  }
  if (!spec["warmup"].is_none()) o.measure.warmup = nb::cast<int>(spec["warmup"]);
  if (!spec["rep"].is_none()) o.measure.target_seconds = nb::cast<double>(spec["rep"]) / 1000.0;
  read_measure_options(spec, o);
  read_bench_hooks(spec, ks, o);
  o.check.enabled = nb::cast<bool>(spec["check"]);
  if (!spec["rtol"].is_none() || !spec["atol"].is_none()) {
    Tolerance t;
    if (!spec["rtol"].is_none()) t.rtol = nb::cast<double>(spec["rtol"]);
    if (!spec["atol"].is_none()) t.atol = nb::cast<double>(spec["atol"]);
    o.check.tolerance = t;
  }
  if (!ks.hooks.reference.is_none()) {
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
  return o;
}

std::string KernelSpec::kind_from(const CallArgs& ca) const {
  if (backend == "auto") return ca.any_tensor ? ca.device.backend : parse_backend("auto");
  const std::string kind = parse_backend(backend);
  if (ca.any_tensor && ca.device.backend != kind) {
    throw Error(ErrorCode::kInvalidArgument,
                name() + " is a " + backend + " kernel but its tensors are on " +
                    ca.device.to_string() + ": move them, or declare backend=\"" +
                    ca.device.backend + "\"");
  }
  return kind;
}

nb::dict KernelSpec::named_args(nb::handle args) const {
  nb::dict d;
  for (std::size_t i = 0; i < params().size(); ++i) d[params()[i].name.c_str()] = args[i];
  return d;
}

nb::handle KernelSpec::stream_keyword(nb::kwargs kwargs) const {
  nb::handle stream = nb::none();
  for (auto [k, v] : kwargs) {
    if (nb::cast<std::string>(k) != "stream") {
      throw Error(ErrorCode::kInvalidArgument,
                  name() + " got the keyword argument '" + nb::cast<std::string>(k) +
                      "': arguments are positional, in signature order; the only keyword "
                      "is stream=");
    }
    stream = v;
  }
  return stream;
}

}  // namespace kiln::py
