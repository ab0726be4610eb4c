#include "check_plan.hpp"

#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"
#include "search_run.hpp"

namespace kiln::internal {

Checking plan_checking(const TunableKernel& kernel, const ArgList& args, Device& device,
                       const CallState& state, const TuneOptions& opt, const ProblemKey& problem) {
  Checking c;
  if (!opt.check.enabled) {
    c.report.detail = "checking is off (TuneOptions::check.enabled is false: --no-check)";
    return c;
  }
  if (opt.check.reference == ReferenceKind::kNone) {
    c.report.detail = "the kernel asks for no reference (ReferenceKind::kNone)";
    return c;
  }
  if (kernel.outputs.empty()) {
    c.report.detail = "the kernel names no outputs to compare";
    return c;
  }
  if (opt.check.reference == ReferenceKind::kUser) {
    if (!opt.check.reference_fn) {
      throw Error(ErrorCode::kInvalidArgument,
                  "ReferenceKind::kUser needs TuneOptions::check.reference_fn");
    }
    Status ran = state.prepare(device);
    if (ran.ok()) ran = opt.check.reference_fn(device, args);
    if (ran.ok()) ran = device.synchronize();
    if (ran.ok()) {
      auto outputs = state.read_outputs(device);
      if (outputs.ok()) {
        c.reference = std::move(*outputs);
        c.report.kind = ReferenceReport::Kind::kUser;
        c.report.detail = "the caller's reference function";
        return c;
      }
      ran = outputs.error();
    }
    KILN_LOG(kWarn) << kernel.tmpl.name << ": the reference function failed, so outputs are "
                    << "checked against the default config instead: " << ran.error().message;
  }
  std::map<std::string, Tolerance> tolerances;
  for (const auto& name : kernel.outputs) {
    tolerances[name] = opt.check.tolerance.value_or(Tolerance::for_dtype(state.output_dtype(name)));
  }
  const Config def = kernel.tmpl.space.default_config();
  std::optional<std::string> unavailable;
  if (!prune_keeps(kernel, problem, def)) {
    unavailable = "the default config {" + def.to_string() +
                  "} is pruned for this problem by the kernel's early prune";
  }
  c.judge = std::make_shared<OutputJudge>(def, std::move(tolerances), unavailable);
  return c;
}

}  // namespace kiln::internal
