// The CUDA backend's compiler: one CompileUnit -> one NVRTC program with a
// name expression per specialization -> CUBIN (real arch) or PTX (virtual).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/backends/nvrtc.hpp"
#include "kiln/compile/compile.hpp"
#include "kiln/core/options.hpp"

namespace kiln::cuda {

class PchDirectories;

class NvrtcCompiler final : public Compiler {
 public:
  explicit NvrtcCompiler(NvrtcSettings settings = NvrtcSettings::from_options(Options::global()));
  ~NvrtcCompiler() override;
  NvrtcCompiler(const NvrtcCompiler&) = delete;
  NvrtcCompiler& operator=(const NvrtcCompiler&) = delete;

  std::string name() const override { return "nvrtc"; }
  // "13.0", or "absent" when NVRTC cannot be loaded.
  std::string version() const override;
  std::vector<std::string> code_options() const override;

  // Thread-safe. Errors: kUnavailable (no NVRTC), kInvalidArgument (an
  // arch/format mismatch or an option this process must not run, see
  // check_options), kCancelled, kCompileFailed (details: log, options).
  Result<CompiledProgram> compile(const CompileUnit& unit, const CancelToken& cancel) override;

  // Attributes a failed grouped compile from NVRTC's "detected during
  // instantiation of ... [with BM=64, ...]" lines (nvrtc_blame.cpp).
  std::vector<std::size_t> blame(const CompileUnit& unit, const std::string& log) const override;

  const NvrtcSettings& settings() const { return settings_; }

 private:
  NvrtcSettings settings_;
  std::unique_ptr<PchDirectories> pch_;
};

// The "-arch=..." value for `arch` and `format`: CUBIN needs a real arch
// (sm_90a), PTX a virtual one (compute_90a; an sm_ name is mapped to it).
// An error names the mismatch and the fix.
Result<std::string> nvrtc_arch_option(const std::string& arch, BinaryFormat format);

// Refuses options measured to be unsafe inside a long-lived process: any
// --Ofast-compile (later plain compiles in the same process produce
// different code), and --fdevice-time-trace=F when F.json exists (NVRTC
// then fails the compile). nullopt when every option is fine.
[[nodiscard]] Status check_options(const std::vector<std::string>& options);

}  // namespace kiln::cuda
