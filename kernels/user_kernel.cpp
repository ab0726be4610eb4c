// Reading a user kernel's JSON spec. Every error names the field it is
// about ("args[2].shape[0]: ..."), so a typo in a hand-written file is a
// one-line fix; unknown keys are errors too, since a misspelt optional key
// would otherwise be ignored in silence.
#include "kiln/kernels/user_kernel.hpp"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "kiln/core/error.hpp"
#include "kiln/core/input_file.hpp"

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

ArgSpec parse_arg(const json& a, const std::string& field) {
  if (!a.is_object()) bad(field, "expected an object, got " + a.dump());
  ArgSpec spec;
  spec.name = get_string(a, "name", field);
  if (a.contains("shape") == a.contains("value")) {
    bad(field, "argument '" + spec.name +
                   "' needs \"shape\" (a tensor) or \"value\" (a scalar), exactly one");
  }
  if (a.contains("shape")) {
    check_keys(a, field, {"name", "dtype", "shape", "role", "init"});
    TensorSpec t;
    t.dtype =
        at_field(field + ".dtype", [&] { return parse_dtype(get_string(a, "dtype", field)); });
    if (!a["shape"].is_array()) bad(field + ".shape", "expected an array of dimensions");
    for (std::size_t i = 0; i < a["shape"].size(); ++i) {
      t.shape.push_back(expr_of(a["shape"][i], field + ".shape[" + std::to_string(i) + "]"));
    }
    t.role = parse_word(optional_string(a, "role", "input", field),
                        {ArgRole::kInput, ArgRole::kOutput, ArgRole::kInOut}, arg_role_name,
                        field + ".role");
    t.init = parse_word(
        optional_string(a, "init", t.role == ArgRole::kOutput ? "zeros" : "random", field),
        {ArgInit::kRandom, ArgInit::kZeros, ArgInit::kOnes}, arg_init_name, field + ".init");
    spec.kind = std::move(t);
    return spec;
  }
  check_keys(a, field, {"name", "type", "value", "in_key"});
  ScalarSpec s;
  s.type = parse_word(get_string(a, "type", field),
                      {ArgType::kBool, ArgType::kI32, ArgType::kU32, ArgType::kI64, ArgType::kU64,
                       ArgType::kF32, ArgType::kF64},
                      arg_type_name, field + ".type");
  const json& v = a["value"];
  if (v.is_number_float() || v.is_boolean()) {
    s.is_literal = true;
    s.literal = v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>();
  } else {
    s.value = expr_of(v, field + ".value");
  }
  // Sizes decide the best config; a literal (an epsilon, a scale) does not.
  s.in_key = optional_bool(a, "in_key", !s.is_literal, field);
  spec.kind = std::move(s);
  return spec;
}

// Integer and bool parameters of a config, as expression variables.
ExprVars config_vars(const Config& config) {
  ExprVars vars;
  for (const auto& [name, value] : config.values()) {
    if (const auto* i = std::get_if<std::int64_t>(&value)) vars[name] = *i;
    if (const auto* b = std::get_if<bool>(&value)) vars[name] = *b ? 1 : 0;
  }
  return vars;
}

std::uint32_t extent(const IntExpr& e, const ExprVars& vars, const char* what, int axis) {
  const std::int64_t v = e.eval(vars);
  if (v < 1 || v > 0xFFFFFFFFll) {
    throw Error(ErrorCode::kInvalidArgument, std::string(what) + "[" + std::to_string(axis) +
                                                 "] = '" + e.text() + "' is " + std::to_string(v) +
                                                 ", outside 1..2^32-1");
  }
  return static_cast<std::uint32_t>(v);
}

void parse_launch(const json& spec, UserKernel& k) {
  if (!spec.contains("launch")) bad("launch", "required: {\"grid\": [x, y, z], ...}");
  const json& l = spec["launch"];
  check_keys(l, "launch", {"grid", "block", "shared_bytes"});
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
  axes("grid", k.grid, true);
  axes("block", k.block, false);
  k.shared_bytes = l.contains("shared_bytes") ? expr_of(l["shared_bytes"], "launch.shared_bytes")
                                              : IntExpr::constant(0);
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
  return at_field("space", [&] { return ConfigSpace::from_json(s, registry); });
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

void check_tensor_names(const UserKernel& k, const std::vector<std::string>& names,
                        const char* field) {
  for (const auto& n : names) {
    auto it =
        std::find_if(k.args.begin(), k.args.end(), [&](const ArgSpec& a) { return a.name == n; });
    if (it == k.args.end() || !it->is_tensor())
      bad(field, "'" + n + "' is not a tensor argument of the spec");
  }
}

bool is_param(const UserKernel& k, const std::string& n) {
  const auto& params = k.tmpl.space.parameters();
  return std::any_of(params.begin(), params.end(), [&](const Parameter& p) { return p.name == n; });
}

// The template: backend, name, source, entry, build settings and space.
void parse_template(const json& spec, UserKernel& k, std::string source, const std::string& entry,
                    std::string name) {
  auto backend = parse_backend_name(get_string(spec, "backend", "spec"));
  if (!backend) bad("backend", "expected the name of a backend, \"cpu\" or \"cuda\"");
  k.backend = *backend;
  k.tmpl.name = spec.contains("name") ? get_string(spec, "name", "spec") : std::move(name);
  k.tmpl.description = optional_string(spec, "description", "", "spec");
  k.tmpl.source = std::move(source);
  k.tmpl.entry =
      entry.empty() && spec.contains("entry") ? get_string(spec, "entry", "spec") : entry;
  if (k.tmpl.entry.empty())
    bad("entry", "no entry expression: pass --entry 'ns::kernel<{P}>' or set \"entry\"");
  if (spec.contains("defines")) {
    k.tmpl.defines = at_field(
        "defines", [&] { return spec["defines"].get<std::map<std::string, std::string>>(); });
  }
  k.tmpl.options = names_of(spec, "options");
  k.tmpl.include_dirs = names_of(spec, "include_dirs");
  k.tmpl.space = parse_space(spec);
  check_not_empty(k.tmpl.space);
  at_field("entry", [&] { return k.tmpl.check(); });
}

void parse_args(const json& spec, UserKernel& k) {
  if (!spec.contains("args") || !spec["args"].is_array() || spec["args"].empty())
    bad("args", "required: the kernel's arguments in parameter order");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < spec["args"].size(); ++i) {
    const std::string field = "args[" + std::to_string(i) + "]";
    k.args.push_back(parse_arg(spec["args"][i], field));
    if (!seen.insert(k.args.back().name).second)
      bad(field, "argument '" + k.args.back().name + "' is given twice");
  }
  // The call is built before any config exists: it sees the dims only.
  for (const auto& d : dims_used(k.args)) {
    if (is_param(k, d))
      bad("args", "a shape or value reads config parameter '" + d +
                      "': arguments depend on the shape (--shape) only");
  }
}

void parse_early_prune(const json& spec, UserKernel& k) {
  if (!spec.contains("early_prune")) return;
  if (!spec["early_prune"].is_array()) bad("early_prune", "expected an array of expressions");
  for (std::size_t i = 0; i < spec["early_prune"].size(); ++i)
    k.early_prune.push_back(
        expr_of(spec["early_prune"][i], "early_prune[" + std::to_string(i) + "]"));
}

// Dims: every name an argument, the launch rule or a prune reads that is
// not a parameter.
std::vector<std::string> dims_of(const UserKernel& k) {
  std::set<std::string> dims;
  for (const auto& d : dims_used(k.args)) dims.insert(d);
  std::vector<const IntExpr*> rule = {&k.shared_bytes};
  for (int i = 0; i < 3; ++i) {
    rule.push_back(&k.grid[i]);
    rule.push_back(&k.block[i]);
  }
  for (const auto& e : k.early_prune) rule.push_back(&e);
  for (const auto* e : rule)
    for (const auto& v : e->variables())
      if (!is_param(k, v)) dims.insert(v);
  return {dims.begin(), dims.end()};
}

void parse_tensor_lists(const json& spec, UserKernel& k) {
  k.outputs = names_of(spec, "outputs");
  if (!spec.contains("outputs")) {
    for (const auto& a : k.args)
      if (a.is_tensor() && a.tensor().role != ArgRole::kInput) k.outputs.push_back(a.name);
  }
  // An inout tensor must start every run from the caller's data.
  k.restore_value = names_of(spec, "restore_value");
  if (!spec.contains("restore_value")) {
    for (const auto& a : k.args)
      if (a.is_tensor() && a.tensor().role == ArgRole::kInOut) k.restore_value.push_back(a.name);
  }
  k.reset_to_zero = names_of(spec, "reset_to_zero");
  check_tensor_names(k, k.outputs, "outputs");
  check_tensor_names(k, k.restore_value, "restore_value");
  check_tensor_names(k, k.reset_to_zero, "reset_to_zero");
}

void parse_checking(const json& spec, UserKernel& k) {
  const std::string reference = optional_string(spec, "reference", "default_config", "spec");
  if (reference == "none")
    k.reference = ReferenceKind::kNone;
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
    k.tolerance = tol;
  }
}

}  // namespace

UserKernel parse_user_kernel(const json& spec, std::string source, std::string entry,
                             std::string name) {
  check_keys(spec, "spec",
             {"name", "description", "backend", "entry", "space", "launch", "args", "outputs",
              "restore_value", "reset_to_zero", "reference", "tolerance", "early_prune", "defines",
              "options", "include_dirs"});
  UserKernel k;
  // nlohmann's dump sorts keys: the same spec, however it is laid out in
  // its file, gives the same hash.
  k.spec_hash = Hasher().field("kiln-user-spec-v1").field(spec.dump()).finish();
  parse_template(spec, k, std::move(source), entry, std::move(name));
  parse_args(spec, k);
  parse_launch(spec, k);
  parse_early_prune(spec, k);
  k.dims = dims_of(k);
  parse_tensor_lists(spec, k);
  parse_checking(spec, k);
  return k;
}

TunableKernel UserKernel::tunable(const ShapeDims& shape) const {
  TunableKernel t;
  t.tmpl = tmpl;
  t.outputs = outputs;
  t.restore_value = restore_value;
  t.reset_to_zero = reset_to_zero;
  t.version = "spec " + spec_hash.hex();
  auto with = [shape](const Config& c) {
    ExprVars vars = shape;
    for (auto& [n, v] : config_vars(c)) vars[n] = v;
    return vars;
  };
  t.launch = [with, grid = std::vector<IntExpr>(grid, grid + 3),
              block = std::vector<IntExpr>(block, block + 3),
              shared = shared_bytes](const Config& c, const ArgList&) {
    const ExprVars vars = with(c);
    LaunchGeometry g;
    g.grid = {extent(grid[0], vars, "grid", 0), extent(grid[1], vars, "grid", 1),
              extent(grid[2], vars, "grid", 2)};
    g.block = {extent(block[0], vars, "block", 0), extent(block[1], vars, "block", 1),
               extent(block[2], vars, "block", 2)};
    const std::int64_t s = shared.eval(vars);
    if (s < 0) throw Error(ErrorCode::kInvalidArgument, "shared_bytes is negative");
    g.shared_bytes = static_cast<std::size_t>(s);
    return g;
  };
  if (!early_prune.empty()) {
    t.early_prune = [with, prunes = early_prune](const Config& c, const ProblemKey&) {
      const ExprVars vars = with(c);
      return std::all_of(prunes.begin(), prunes.end(),
                         [&](const IntExpr& e) { return e.eval(vars) != 0; });
    };
  }
  return t;
}

Result<UserKernel> load_user_kernel(const std::filesystem::path& template_file,
                                    const std::filesystem::path& spec_file,
                                    const std::string& entry) {
  // A template or spec past 16 MiB is not one: refused unread rather than
  // grown into memory (--template /dev/zero, a log file named by mistake).
  constexpr std::uint64_t kMaxInputBytes = 16u << 20;
  auto read = [&](const std::filesystem::path& p, const char* what) {
    return internal::read_input_file(p, what, kMaxInputBytes);
  };
  auto source = read(template_file, "template file");
  if (!source.ok()) return source.error();
  auto spec_text = read(spec_file, "space file");
  if (!spec_text.ok()) return spec_text.error();
  json spec;
  try {
    spec = json::parse(*spec_text);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number no double holds (1e400).
    return make_error(ErrorCode::kInvalidArgument,
                      spec_file.string() + ": not valid JSON: " + std::string(e.what()));
  }
  try {
    UserKernel k =
        parse_user_kernel(spec, std::move(*source), entry, template_file.stem().string());
    // Include directories are relative to the spec file. (Not the template's
    // own directory by default: every file under an include directory
    // enters the cache keys, and a busy directory would defeat warm starts.)
    const auto base = std::filesystem::absolute(spec_file).parent_path();
    for (std::size_t i = 0; i < k.tmpl.include_dirs.size(); ++i) {
      std::string& dir = k.tmpl.include_dirs[i];
      dir = (base / dir).lexically_normal().string();
      // A missing directory is a typo the compiler would report only as a
      // header it cannot find, if at all.
      std::error_code ec;
      if (!std::filesystem::is_directory(dir, ec))
        return make_error(ErrorCode::kInvalidArgument,
                          spec_file.string() + ": include_dirs[" + std::to_string(i) + "]: " + dir +
                              " is not a directory (relative paths are from the spec's "
                              "directory); fix the path or remove it");
    }
    return k;
  } catch (const Error& e) {
    // parse_user_kernel throws for a spec in memory (misuse by its caller);
    // a spec read from a file is input, and its problems are values.
    return make_error(e.code(), spec_file.string() + ": " + e.what());
  } catch (const json::exception& e) {
    // A field of the wrong type that no check above names: still the
    // spec's problem, never an uncaught exception.
    return make_error(ErrorCode::kInvalidArgument,
                      spec_file.string() + ": a field has the wrong type (" + e.what() +
                          "); docs/user-kernels.md lists each field's type");
  }
}

}  // namespace kiln
