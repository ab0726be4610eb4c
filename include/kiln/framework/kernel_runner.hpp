// A runner on a Kiln kernel: its tactics are the configs of the kernel's
// space (tactic i = the i-th config of ConfigSpace::enumerate(), kept by the
// early prune for the call), its fallback is the space's default config,
// and its preparation compiles the tactics about to be profiled in grouped
// programs (through the artifact cache), so compile time is never timed.
// Running a tactic that was not prepared (the fallback of a skipped op, a
// decision served from disk) compiles or loads that one config on first use.
//
//   kiln::KernelRunner runner(kernel, backend, *device, &artifacts,
//                             [](const kiln::ArgList& in) { return with_sizes(in); });
//   tuner.choose_one("rmsnorm", {&runner, &reference}, inputs, spec);
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "kiln/framework/runner.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln {

class ArtifactCache;

class KernelRunner : public TunableRunner {
 public:
  // Maps the op's inputs to the kernel's arguments (adds size scalars,
  // reorders). Empty: the inputs are the arguments.
  using Bind = std::function<ArgList(const ArgList& inputs)>;

  // The identity is "kiln:<template name>" at a version taken from the
  // kernel's definition_hash (kiln/tuner/tuner.hpp): a changed kernel never serves
  // a decision made for the old one. `artifacts` may be null.
  KernelRunner(TunableKernel kernel, Backend backend, Device& device,
               ArtifactCache* artifacts = nullptr, Bind bind = {});
  ~KernelRunner() override;

  std::vector<int> tactics(const ArgList& inputs) override;
  Status run(const ArgList& inputs, int tactic) override;
  Status prepare(const ArgList& inputs, std::span<const int> tactics) override;
  Status synchronize() override { return device_.synchronize(); }
  std::string describe(int tactic) const override;  // the config, "BM=64,BN=32"

  // The config of a tactic (kFallbackTactic: the default). Throws
  // kiln::Error for a tactic outside the space.
  Config config_of(int tactic) const;
  // Specialisations this runner compiled (artifact cache misses).
  std::size_t compiled() const;
  const TunableKernel& kernel() const { return kernel_; }

 private:
  Result<const LoadedKernel*> loaded(int tactic);

  TunableKernel kernel_;
  Backend backend_;
  Device& device_;
  ArtifactCache* artifacts_;
  Bind bind_;
  std::vector<Config> configs_;  // the space, enumerated once
  int default_index_ = -1;       // the default config's tactic

  mutable std::mutex mutex_;
  std::map<int, LoadedKernel> loaded_;  // tactic -> kernel on device_
  std::map<int, ErrorInfo> failed_;     // tactic -> why it cannot run
  std::size_t compiled_ = 0;
};

}  // namespace kiln
