// ClangCompiler: kiln::Compiler for the CPU. Clang as a library compiles a
// CompileUnit in memory (sources and headers served from an in-memory file
// system) to a relocatable object optimised for the host CPU (-O3,
// -march=native); the CPU device links it with LLVM ORC. The object is the
// artifact, so the artifact cache stores it and a warm run only links it.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kiln/compile.hpp"

namespace kiln::cpu {

struct ClangSettings {
  // The clang executable (argv[0] of the in-process driver) and Clang's
  // resource directory (its builtin headers), fixed at configure time.
  std::filesystem::path clang_path;
  std::filesystem::path resource_dir;
  std::vector<std::string> extra_options;  // KILN_CPU_FLAGS, split on spaces

  static ClangSettings from_options();  // the build's paths + Options::global()
};

class ClangCompiler final : public Compiler {
 public:
  explicit ClangCompiler(ClangSettings settings);

  std::string name() const override { return "clang-orc"; }
  std::string version() const override;
  std::vector<std::string> code_options() const override;
  Result<CompiledProgram> compile(const CompileUnit& unit, const CancelToken& cancel) override;

  // The driver arguments compile() would pass for `unit` (tests, logs).
  std::vector<std::string> driver_args(const CompileUnit& unit) const;

 private:
  std::optional<std::vector<std::string>> cached_cc1_args(
      const std::vector<std::string>& args) const;
  void remember_cc1_args(const std::vector<std::string>& args, std::vector<std::string> cc1) const;

  ClangSettings settings_;
  mutable std::mutex cc1_mutex_;
  mutable std::map<std::vector<std::string>, std::vector<std::string>> cc1_cache_;
};

// Where the build found Clang's resource directory, checked now: an error
// (kUnavailable) naming the path and the fix when its builtin headers are
// missing (libclang-common-19-dev not installed).
Result<std::filesystem::path> checked_resource_dir(const std::filesystem::path& dir);

}  // namespace kiln::cpu
