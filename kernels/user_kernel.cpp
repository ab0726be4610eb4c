// load_user_kernel (a user kernel's template text and JSON spec, read by
// the one builder, kernel_description.cpp) and a description's tunable
// kernel for a shape. See kiln/kernels/kernel_description.hpp.
#include "kiln/kernels/kernel_description.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"
#include "kiln/core/input_file.hpp"

namespace kiln {

using nlohmann::json;

namespace {

std::uint32_t extent(const IntExpr& e, const ExprVars& vars, const char* what, int axis) {
  const std::int64_t v = e.eval(vars);
  if (v < 1 || v > 0xFFFFFFFFll) {
    throw Error(ErrorCode::kInvalidArgument, std::string(what) + "[" + std::to_string(axis) +
                                                 "] = '" + e.text() + "' is " + std::to_string(v) +
                                                 ", outside 1..2^32-1");
  }
  return static_cast<std::uint32_t>(v);
}

}  // namespace

TunableKernel KernelDescription::tunable(const ShapeDims& shape) const {
  if (!launch)
    throw Error(ErrorCode::kInvalidArgument,
                tmpl.name + " has no launch rule: give the description \"launch\"");
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
  t.launch = [with, rule = *launch](const Config& c, const ArgList&) {
    const ExprVars vars = with(c);
    LaunchGeometry g;
    g.grid = {extent(rule.grid[0], vars, "grid", 0), extent(rule.grid[1], vars, "grid", 1),
              extent(rule.grid[2], vars, "grid", 2)};
    g.block = {extent(rule.block[0], vars, "block", 0), extent(rule.block[1], vars, "block", 1),
               extent(rule.block[2], vars, "block", 2)};
    const std::int64_t s = rule.shared_bytes.eval(vars);
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

Result<KernelDescription> load_user_kernel(const std::filesystem::path& template_file,
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
    KernelDescription k =
        describe_kernel(spec, std::move(*source), entry, template_file.stem().string());
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
    // describe_kernel throws for a spec in memory (misuse by its caller);
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
