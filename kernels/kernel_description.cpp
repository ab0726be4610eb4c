// The one builder of a kernel description (kernel_description.hpp): each
// step reads its fields of the JSON spec. Every error names the field it
// is about ("args[2].shape[0]: ..."), so a typo in a hand-written file is a
// one-line fix; unknown keys are errors too, since a misspelt optional key
// would otherwise be ignored in silence. The signature's types are read by
// kernel_signature.cpp.
#include "kiln/kernels/kernel_description.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"

namespace kiln {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, field + ": " + what);
}

// Runs `fn`, prefixing any kiln::Error (or JSON type error) with the field
// it concerns.
template <class F>
auto at_field(const std::string& field, F&& fn) {
  try {
    return fn();
  } catch (const Error& e) {
    bad(field, e.what());
  } catch (const json::exception& e) {
    bad(field, e.what());
  }
}

void check_keys(const json& obj, const std::string& field, std::set<std::string> allowed) {
  if (!obj.is_object()) bad(field, "expected an object, got " + obj.dump());
  for (const auto& [key, value] : obj.items()) {
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      bad(field, "unknown key \"" + key + "\" (allowed: " + list + ")");
    }
  }
}

std::string get_string(const json& obj, const std::string& key, const std::string& field) {
  if (!obj.contains(key)) bad(field, "\"" + key + "\" is required");
  if (!obj[key].is_string()) bad(field + "." + key, "expected a string, got " + obj[key].dump());
  return obj[key].get<std::string>();
}

// An optional field of one JSON type: `fallback` when absent, an error
// naming the field and what it holds when of another type.
std::string optional_string(const json& obj, const std::string& key, std::string fallback,
                            const std::string& field) {
  if (!obj.contains(key)) return fallback;
  if (!obj[key].is_string()) bad(field + "." + key, "expected a string, got " + obj[key].dump());
  return obj[key].get<std::string>();
}

bool optional_bool(const json& obj, const std::string& key, bool fallback,
                   const std::string& field) {
  if (!obj.contains(key)) return fallback;
  if (!obj[key].is_boolean())
    bad(field + "." + key, "expected true or false, got " + obj[key].dump());
  return obj[key].get<bool>();
}

// A number in [lo, hi]: a tolerance outside it would fail every correct
// config (a negative atol) or none (a cosine above 1 no output reaches).
double optional_number(const json& obj, const std::string& key, double fallback, double lo,
                       double hi, const std::string& field) {
  if (!obj.contains(key)) return fallback;
  const json& v = obj[key];
  if (!v.is_number() || !(v.get<double>() >= lo && v.get<double>() <= hi))
    bad(field + "." + key, "expected a number from " + json(lo).dump() + " to " + json(hi).dump() +
                               ", got " + v.dump());
  return v.get<double>();
}

// An expression: a JSON string, or an integer literal.
IntExpr expr_of(const json& j, const std::string& field) {
  if (j.is_number_integer()) return IntExpr::constant(j.get<std::int64_t>());
  if (!j.is_string()) bad(field, "expected an integer or an expression string, got " + j.dump());
  return at_field(field, [&] { return IntExpr::parse(j.get<std::string>()); });
}

std::vector<std::string> names_of(const json& spec, const char* key) {
  std::vector<std::string> out;
  if (!spec.contains(key)) return out;
  const json& list = spec[key];
  if (!list.is_array()) bad(key, "expected an array of strings");
  for (const auto& n : list) {
    if (!n.is_string()) bad(key, "expected strings, got " + n.dump());
    out.push_back(n.get<std::string>());
  }
  return out;
}

template <class T>
T parse_word(const std::string& text, std::initializer_list<T> values, const char* (*name)(T),
             const std::string& field) {
  std::string list;
  for (T v : values) {
    if (text == name(v)) return v;
    list += (list.empty() ? "" : ", ") + std::string(name(v));
  }
  bad(field, "\"" + text + "\" is not one of " + list);
}

// Configs the emptiness check looks at before it gives up on a huge space
// (which the tuner samples rather than enumerates).
constexpr std::uint64_t kSpaceScanLimit = 1'000'000;

// A space with no config left is bad input, found before anything
// compiles: names the constraints that reject every config on their own,
// else all of them (together they leave nothing).
void check_not_empty(const ConfigSpace& space) {
  if (space.parameters().empty())
    bad("space.parameters", "empty: a kernel to tune needs at least one parameter");
  const std::uint64_t total = space.cartesian_size();
  const auto& constraints = space.constraints();
  std::vector<bool> ever_kept(constraints.size(), false);
  for (std::uint64_t i = 0; i < total && i < kSpaceScanLimit; ++i) {
    const Config config = space.config_at(i);
    bool all = true;
    for (std::size_t c = 0; c < constraints.size(); ++c) {
      bool kept = false;
      try {
        kept = constraints[c].predicate(config);
      } catch (const Error& e) {
        bad("space.constraints", "'" + constraints[c].name + "' fails for {" + config.to_string() +
                                     "}: " + e.what() +
                                     " (constraints read parameters only; early_prune reads the "
                                     "shape too)");
      }
      ever_kept[c] = ever_kept[c] || kept;
      all = all && kept;
    }
    if (all) return;
  }
  if (total > kSpaceScanLimit) return;  // not proven empty: the tuner samples it
  std::string alone, every;
  std::size_t alone_count = 0;
  for (std::size_t c = 0; c < constraints.size(); ++c) {
    const std::string name = "'" + constraints[c].name + "'";
    every += (every.empty() ? "" : ", ") + name;
    if (!ever_kept[c]) alone += (alone_count++ ? ", " : "") + name;
  }
  const std::string who = alone_count == 1  ? "constraint " + alone + " rejects"
                          : alone_count > 1 ? "constraints " + alone + " each reject"
                                            : "constraints " + every + " together reject";
  bad("space.constraints", "no config is left: " + who + " every one of the " +
                               std::to_string(total) +
                               " combinations of the parameters' values: relax a constraint or "
                               "add values");
}

ConfigSpace parse_space(const json& spec) {
  if (!spec.contains("space")) bad("space", "required: {\"parameters\": [...]}");
  const json& s = spec["space"];
  // Constraints are expressions; each names its own predicate.
  ConstraintRegistry registry;
  if (s.is_object() && s.contains("constraints") && s["constraints"].is_array()) {
    for (std::size_t i = 0; i < s["constraints"].size(); ++i) {
      const json& c = s["constraints"][i];
      if (!c.is_string()) continue;  // from_json reports it
      IntExpr e = expr_of(c, "space.constraints[" + std::to_string(i) + "]");
      registry[c.get<std::string>()] = [e](const Config& config) {
        return e.eval(config_vars(config)) != 0;
      };
    }
  }
  ConfigSpace space = at_field("space", [&] { return ConfigSpace::from_json(s, registry); });
  check_not_empty(space);
  return space;
}

// An argument's type, read by the signature parser (a tensor's dtype as
// its "T*"), of the kind its keys say.
KernelParam param_of(const std::string& name, const std::string& type, KernelParam::Kind kind,
                     const std::string& field, const char* want) {
  KernelParam p = at_field(field, [&] { return parse_param(name, type); });
  if (p.kind != kind || p.read_only) bad(field, std::string("expected ") + want);
  return p;
}

TensorSpec parse_tensor(const json& a, KernelParam& param, const std::string& field) {
  check_keys(a, field, {"name", "dtype", "shape", "role", "init"});
  param = param_of(param.name, get_string(a, "dtype", field) + "*", KernelParam::Kind::kTensor,
                   field + ".dtype", "an element type: f32, bf16, i32, ...");
  TensorSpec t;
  t.dtype = param.dtype;
  if (!a["shape"].is_array()) bad(field + ".shape", "expected an array of dimensions");
  for (std::size_t i = 0; i < a["shape"].size(); ++i)
    t.shape.push_back(expr_of(a["shape"][i], field + ".shape[" + std::to_string(i) + "]"));
  t.role = parse_word(optional_string(a, "role", "input", field),
                      {ArgRole::kInput, ArgRole::kOutput, ArgRole::kInOut}, arg_role_name,
                      field + ".role");
  // An input is its signature's "const T*": the kernel only reads it.
  param.read_only = t.role == ArgRole::kInput;
  if (param.read_only) param.type_text = "const " + param.type_text;
  t.init = parse_word(
      optional_string(a, "init", t.role == ArgRole::kOutput ? "zeros" : "random", field),
      {ArgInit::kRandom, ArgInit::kZeros, ArgInit::kOnes}, arg_init_name, field + ".init");
  return t;
}

ScalarSpec parse_scalar(const json& a, KernelParam& param, const std::string& field) {
  check_keys(a, field, {"name", "type", "value", "in_key"});
  param = param_of(param.name, get_string(a, "type", field), KernelParam::Kind::kScalar,
                   field + ".type", "a scalar type; a tensor has \"dtype\" and \"shape\"");
  ScalarSpec s;
  s.type = param.scalar;
  const json& v = a["value"];
  if (v.is_number_float() || v.is_boolean()) {
    s.is_literal = true;
    s.literal = v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>();
  } else {
    s.value = expr_of(v, field + ".value");
  }
  // Sizes decide the best config; a literal (an epsilon, a scale) does not.
  s.in_key = optional_bool(a, "in_key", !s.is_literal, field);
  return s;
}

// One argument: its ArgSpec (how a call builds it) and its parameter.
ArgSpec parse_arg(const json& a, KernelParam& param, const std::string& field) {
  if (!a.is_object()) bad(field, "expected an object, got " + a.dump());
  ArgSpec spec;
  spec.name = get_string(a, "name", field);
  if (a.contains("shape") == a.contains("value")) {
    bad(field, "argument '" + spec.name +
                   "' needs \"shape\" (a tensor) or \"value\" (a scalar), exactly one");
  }
  param.name = spec.name;
  if (a.contains("shape"))
    spec.kind = parse_tensor(a, param, field);
  else
    spec.kind = parse_scalar(a, param, field);
  return spec;
}

void parse_launch(const json& spec, KernelDescription& d) {
  if (!spec.contains("launch")) bad("launch", "required: {\"grid\": [x, y, z], ...}");
  const json& l = spec["launch"];
  check_keys(l, "launch", {"grid", "block", "shared_bytes"});
  LaunchExprs& rule = d.launch.emplace();
  auto axes = [&](const char* key, IntExpr(&out)[3], bool required) {
    for (auto& e : out) e = IntExpr::constant(1);
    if (!l.contains(key)) {
      if (required) bad(std::string("launch.") + key, "required: an array of 1 to 3 expressions");
      return;
    }
    const json& list = l[key];
    if (!list.is_array() || list.empty() || list.size() > 3)
      bad(std::string("launch.") + key, "expected an array of 1 to 3 expressions");
    for (std::size_t i = 0; i < list.size(); ++i)
      out[i] = expr_of(list[i], std::string("launch.") + key + "[" + std::to_string(i) + "]");
  };
  axes("grid", rule.grid, true);
  axes("block", rule.block, false);
  rule.shared_bytes = l.contains("shared_bytes") ? expr_of(l["shared_bytes"], "launch.shared_bytes")
                                                 : IntExpr::constant(0);
}

bool is_param(const KernelDescription& d, const std::string& n) {
  const auto& params = d.tmpl.space.parameters();
  return std::any_of(params.begin(), params.end(), [&](const Parameter& p) { return p.name == n; });
}

// The template: backend, name, source, entry, build settings and space.
void parse_template(const json& spec, KernelDescription& d, std::string source,
                    const std::string& entry, std::string name) {
  auto backend = parse_backend_name(get_string(spec, "backend", "spec"));
  if (!backend) bad("backend", "expected the name of a backend, \"cpu\" or \"cuda\"");
  d.backend = *backend;
  d.tmpl.name = spec.contains("name") ? get_string(spec, "name", "spec") : std::move(name);
  d.tmpl.description = optional_string(spec, "description", "", "spec");
  d.tmpl.source = std::move(source);
  d.tmpl.entry =
      entry.empty() && spec.contains("entry") ? get_string(spec, "entry", "spec") : entry;
  if (d.tmpl.entry.empty())
    bad("entry", "no entry expression: pass --entry 'ns::kernel<{P}>' or set \"entry\"");
  if (spec.contains("defines")) {
    d.tmpl.defines = at_field(
        "defines", [&] { return spec["defines"].get<std::map<std::string, std::string>>(); });
  }
  d.tmpl.options = names_of(spec, "options");
  d.tmpl.include_dirs = names_of(spec, "include_dirs");
  d.tmpl.space = parse_space(spec);
  at_field("entry", [&] { return d.tmpl.check(); });
}

// The arguments, and the signature they imply.
void parse_args(const json& spec, KernelDescription& d) {
  if (!spec.contains("args") || !spec["args"].is_array() || spec["args"].empty())
    bad("args", "required: the kernel's arguments in parameter order");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < spec["args"].size(); ++i) {
    const std::string field = "args[" + std::to_string(i) + "]";
    d.args.push_back(parse_arg(spec["args"][i], d.signature.emplace_back(), field));
    if (!seen.insert(d.args.back().name).second)
      bad(field, "argument '" + d.args.back().name + "' is given twice");
  }
  // The call is built before any config exists: it sees the dims only.
  for (const auto& n : dims_used(d.args)) {
    if (is_param(d, n))
      bad("args", "a shape or value reads config parameter '" + n +
                      "': arguments depend on the shape (--shape) only");
  }
}

void parse_early_prune(const json& spec, KernelDescription& d) {
  if (!spec.contains("early_prune")) return;
  if (!spec["early_prune"].is_array()) bad("early_prune", "expected an array of expressions");
  for (std::size_t i = 0; i < spec["early_prune"].size(); ++i)
    d.early_prune.push_back(
        expr_of(spec["early_prune"][i], "early_prune[" + std::to_string(i) + "]"));
}

// Dims: every name an argument, the launch rule or a prune reads that is
// not a parameter.
std::vector<std::string> dims_of(const KernelDescription& d) {
  std::set<std::string> dims;
  for (const auto& n : dims_used(d.args)) dims.insert(n);
  std::vector<const IntExpr*> rule = {&d.launch->shared_bytes};
  for (int i = 0; i < 3; ++i) {
    rule.push_back(&d.launch->grid[i]);
    rule.push_back(&d.launch->block[i]);
  }
  for (const auto& e : d.early_prune) rule.push_back(&e);
  for (const auto* e : rule)
    for (const auto& v : e->variables())
      if (!is_param(d, v)) dims.insert(v);
  return {dims.begin(), dims.end()};
}

std::optional<std::vector<std::string>> optional_names(const json& spec, const char* key) {
  if (!spec.contains(key)) return std::nullopt;
  return names_of(spec, key);
}

void parse_checking(const json& spec, KernelDescription& d) {
  const std::string reference = optional_string(spec, "reference", "default_config", "spec");
  if (reference == "none")
    d.reference = ReferenceKind::kNone;
  else if (reference != "default_config")
    bad("reference", "\"" + reference + "\" is not one of default_config, none");
  if (spec.contains("tolerance")) {
    const json& t = spec["tolerance"];
    check_keys(t, "tolerance", {"atol", "rtol", "min_cosine"});
    Tolerance tol;
    const double huge = std::numeric_limits<double>::max();
    tol.atol = optional_number(t, "atol", tol.atol, 0, huge, "tolerance");
    tol.rtol = optional_number(t, "rtol", tol.rtol, 0, huge, "tolerance");
    // 0 turns the cosine check off (compare.cpp).
    tol.min_cosine = optional_number(t, "min_cosine", tol.min_cosine, 0, 1, "tolerance");
    d.tolerance = tol;
  }
}

}  // namespace

void check_parameter_names(const KernelDescription& d, const std::vector<std::string>& names,
                           const char* field, ParamKinds kinds) {
  auto fits = [&](const KernelParam& p) {
    return kinds == ParamKinds::kAny || p.kind == KernelParam::Kind::kTensor ||
           (kinds == ParamKinds::kBuffers && p.kind == KernelParam::Kind::kPointer);
  };
  const char* what = kinds == ParamKinds::kAny ? "parameter" : "tensor parameter";
  for (const auto& n : names) {
    auto it = std::find_if(d.signature.begin(), d.signature.end(),
                           [&](const KernelParam& p) { return p.name == n; });
    if (it != d.signature.end() && fits(*it)) continue;
    std::string known;
    for (const auto& p : d.signature)
      if (fits(p)) known += (known.empty() ? "" : ", ") + p.name;
    throw Error(ErrorCode::kInvalidArgument,
                std::string(field) + " names '" + n + "', which is not a " + what + " of " +
                    d.tmpl.name + " (its " +
                    (kinds == ParamKinds::kAny ? "parameters" : "tensors") + ": " +
                    (known.empty() ? "none" : known) + "): name one of them");
  }
}

void describe_tensor_lists(KernelDescription& d, std::optional<std::vector<std::string>> outputs,
                           std::optional<std::vector<std::string>> restore_value,
                           std::vector<std::string> reset_to_zero) {
  std::vector<std::string> tensors, written, inout;
  for (const auto& p : d.signature) {
    if (p.kind != KernelParam::Kind::kTensor) continue;
    tensors.push_back(p.name);
    if (!p.read_only) written.push_back(p.name);
  }
  // An inout tensor must start every run from the caller's data.
  for (const auto& a : d.args)
    if (a.is_tensor() && a.tensor().role == ArgRole::kInOut) inout.push_back(a.name);
  d.outputs = outputs ? std::move(*outputs) : written.empty() ? tensors : written;
  d.restore_value = restore_value ? std::move(*restore_value) : inout;
  d.reset_to_zero = std::move(reset_to_zero);
  check_parameter_names(d, d.outputs, "outputs", ParamKinds::kTensors);
  check_parameter_names(d, d.restore_value, "restore_value", ParamKinds::kBuffers);
  check_parameter_names(d, d.reset_to_zero, "reset_to_zero", ParamKinds::kBuffers);
}

KernelDescription describe_kernel(const json& spec, std::string source, std::string entry,
                                  std::string name) {
  check_keys(spec, "spec",
             {"name", "description", "backend", "entry", "space", "launch", "args", "outputs",
              "restore_value", "reset_to_zero", "reference", "tolerance", "early_prune", "defines",
              "options", "include_dirs"});
  KernelDescription d;
  // nlohmann's dump sorts keys: the same spec, however it is laid out in
  // its file, gives the same hash.
  d.spec_hash = Hasher().field("kiln-user-spec-v1").field(spec.dump()).finish();
  parse_template(spec, d, std::move(source), entry, std::move(name));
  parse_args(spec, d);
  parse_launch(spec, d);
  parse_early_prune(spec, d);
  d.dims = dims_of(d);
  describe_tensor_lists(d, optional_names(spec, "outputs"), optional_names(spec, "restore_value"),
                        names_of(spec, "reset_to_zero"));
  parse_checking(spec, d);
  return d;
}

}  // namespace kiln
