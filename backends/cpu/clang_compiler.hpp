// ClangCompiler: kiln::Compiler for the CPU. Clang as a library compiles a
// CompileUnit in memory (sources and headers served from an in-memory file
// system) to a relocatable object optimised for the host CPU (-O3,
// -march=native); the CPU device links it with LLVM ORC. The object is the
// artifact, so the artifact cache stores it and a warm run only links it.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kiln/compile/compile.hpp"
#include "runtime/cpu_runtime.hpp"

// Forward declarations: this header is included by LLVM-free code (bench).
namespace llvm {
template <typename T>
class IntrusiveRefCntPtr;
class raw_ostream;
class raw_pwrite_stream;
namespace vfs {
class FileSystem;
}
}  // namespace llvm
namespace clang {
class CompilerInvocation;
class DiagnosticsEngine;
class FrontendAction;
}  // namespace clang

namespace kiln::cpu {

struct ClangSettings {
  // The clang executable (argv[0] of the in-process driver) and Clang's
  // resource directory (its builtin headers), fixed at configure time.
  std::filesystem::path clang_path;
  std::filesystem::path resource_dir;
  std::vector<std::string> extra_options;  // KILN_CPU_FLAGS, split on spaces
  // Precompile the prelude and `pch_headers` once per process and option
  // set, and include that PCH in the compiles of units whose source or
  // headers include a system header (KILN_PCH, on by default).
  bool pch = true;
  std::vector<std::string> pch_headers = {"cstddef",   "cstdint",     "cmath",
                                          "algorithm", "type_traits", "limits"};

  static ClangSettings from_options();  // the build's paths + Options::global()
};

class ClangCompiler final : public Compiler {
 public:
  explicit ClangCompiler(ClangSettings settings);

  std::string name() const override { return kCompilerName; }
  std::string version() const override;
  std::vector<std::string> code_options() const override;
  Result<CompiledProgram> compile(const CompileUnit& unit, const CancelToken& cancel) override;

  // The driver arguments compile() would pass for `unit` (tests, logs).
  std::vector<std::string> driver_args(const CompileUnit& unit) const;

 private:
  std::vector<std::string> common_args(const CompileUnit& unit, const char* language) const;
  std::string pch_header() const;
  bool uses_pch(const CompileUnit& unit) const;
  Result<std::shared_ptr<clang::CompilerInvocation>> invocation(
      const std::vector<std::string>& args, clang::DiagnosticsEngine& diags,
      llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> files) const;
  // False when the action failed; the diagnostics are in `log`.
  [[nodiscard]] bool run(std::shared_ptr<clang::CompilerInvocation> invocation,
                         llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> files,
                         clang::FrontendAction& action, llvm::raw_ostream& log,
                         std::unique_ptr<llvm::raw_pwrite_stream> output) const;
  Result<std::shared_ptr<const std::string>> pch_for(
      const CompileUnit& unit, llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> files) const;
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
