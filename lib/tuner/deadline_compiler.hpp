// A compile deadline that starts when the compile starts (not when its unit
// was queued, so a long queue does not expire units before they run). Wraps
// the backend's compiler for a tuning run: the inner compile gets a token
// that fires at the deadline; one that comes back cancelled because of it
// is reported as kTimeout. A compiler that cannot stop mid-compile (Clang in
// process) still runs to its end; worker-process compilers are killed
// (include/kiln/tuner/bench_worker.hpp: process_compilers).
#pragma once

#include <memory>

#include "kiln/compile/compile.hpp"

namespace kiln::internal {

class DeadlineCompiler final : public Compiler {
 public:
  DeadlineCompiler(std::shared_ptr<Compiler> inner, double seconds)
      : inner_(std::move(inner)), seconds_(seconds) {}

  std::string name() const override { return inner_->name(); }
  std::string version() const override { return inner_->version(); }
  std::vector<std::string> code_options() const override { return inner_->code_options(); }
  Result<CompiledProgram> compile(const CompileUnit& unit, const CancelToken& cancel) override;
  std::vector<std::size_t> blame(const CompileUnit& unit, const std::string& log) const override {
    return inner_->blame(unit, log);
  }

 private:
  std::shared_ptr<Compiler> inner_;
  double seconds_;
};

}  // namespace kiln::internal
