// Grouping specializations into compile units, and the artifact key.
#include <algorithm>
#include <map>

#include "kiln/compile/compile_engine.hpp"

#include "include_digest.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/keys.hpp"

namespace kiln {

std::size_t resolve_group_size(std::size_t requested, const Options& options) {
  if (requested > 0) return requested;
  if (options.group_size > 0) return static_cast<std::size_t>(options.group_size);
  return kDefaultGroupSize;
}

namespace {

// Everything a program's command line depends on: specializations agreeing
// on it can share one program.
std::vector<std::string> program_options(const Specialization& s) {
  std::vector<std::string> out;
  for (const auto& o : s.options) out.push_back(o);
  for (const auto& [name, value] : s.defines) out.push_back("-D" + name + "=" + value);
  return out;
}

}  // namespace

std::vector<CompileUnit> group(const KernelTemplate& kernel,
                               const std::vector<Specialization>& specializations,
                               const GroupOptions& options) {
  if (options.arch.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "group(): no target arch given for '" + kernel.name +
                    "': set GroupOptions::arch (sm_90a, compute_90, host)");
  }
  const std::size_t g = resolve_group_size(options.group_size);
  // Classes of specializations with the same command line, in first-seen order.
  std::vector<std::vector<std::string>> class_options;
  std::vector<std::vector<const Specialization*>> classes;
  std::map<std::vector<std::string>, std::size_t> index;
  for (const auto& s : specializations) {
    if (s.kernel != kernel.name) {
      throw Error(ErrorCode::kInvalidArgument, "group(): specialization '" + s.entry +
                                                   "' belongs to kernel '" + s.kernel + "', not '" +
                                                   kernel.name + "'");
    }
    auto opts = program_options(s);
    auto [it, inserted] = index.emplace(opts, classes.size());
    if (inserted) {
      classes.emplace_back();
      class_options.push_back(std::move(opts));
    }
    classes[it->second].push_back(&s);
  }
  std::vector<CompileUnit> units;
  for (std::size_t c = 0; c < classes.size(); ++c) {
    const auto& members = classes[c];
    const std::size_t n = members.size();
    std::size_t count = (n + g - 1) / g;  // units in this class
    if (options.workers > 1) {
      const auto w = static_cast<std::size_t>(options.workers);
      count = std::min(n, (count + w - 1) / w * w);
    }
    std::size_t at = 0;
    for (std::size_t u = 0; u < count; ++u) {
      // Balanced: the first n % count units take one more.
      const std::size_t size = n / count + (u < n % count ? 1 : 0);
      CompileUnit unit;
      unit.kernel = kernel.name;
      unit.source = kernel.source;
      unit.headers = kernel.headers;
      unit.include_dirs = kernel.include_dirs;
      unit.arch = options.arch;
      unit.format = options.format;
      unit.options = class_options[c];
      for (std::size_t i = 0; i < size; ++i) unit.specializations.push_back(*members[at + i]);
      at += size;
      units.push_back(std::move(unit));
    }
  }
  return units;
}

Hash128 specialization_key(const CompileContext& context, const Compiler& compiler,
                           const CompileUnit& unit, std::size_t index) {
  // The source with each in-memory header folded in (name and content hash).
  std::string folded = unit.source;
  for (const auto& h : unit.headers) {
    folded += "\n//kiln-header " + h.name + " " + hash128(h.content).hex();
  }
  std::vector<std::string> options = unit.options;
  for (const auto& dir : unit.include_dirs) options.push_back("-I" + dir);
  // Headers found on disk count by content, like the in-memory ones.
  if (!unit.include_dirs.empty()) {
    options.push_back("--kiln-include-digest=" +
                      internal::include_dirs_digest(unit.include_dirs).hex());
  }
  options.push_back("--kiln-compiler=" + compiler.name());
  for (const auto& o : compiler.code_options()) options.push_back(o);
  options.push_back(std::string("--kiln-format=") + binary_format_name(unit.format));
  return artifact_key(context.toolchain, folded, options, unit.specializations.at(index).entry,
                      unit.arch, context.env);
}

std::vector<Artifact> make_artifacts(const CompileContext& context, const Compiler& compiler,
                                     const CompileUnit& unit, const CompiledProgram& program) {
  std::vector<Artifact> out;
  const std::string compiler_id = compiler.name() + " " + compiler.version();
  for (std::size_t i = 0; i < unit.specializations.size(); ++i) {
    const Specialization& s = unit.specializations[i];
    Artifact a;
    a.key = specialization_key(context, compiler, unit, i);
    a.kernel = s.kernel;
    a.config = s.config;
    a.entry = s.entry;
    a.lowered_name = i < program.lowered_names.size() ? program.lowered_names[i] : std::string();
    a.format = program.format;
    a.arch = program.arch;
    a.binary = program.binary;
    a.compiler = compiler_id;
    a.options = program.options;
    a.log = program.log;
    a.compile_seconds = program.seconds;
    a.group_size = unit.specializations.size();
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace kiln
