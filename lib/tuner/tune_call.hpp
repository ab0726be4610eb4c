// One call of the Autotuner: what it tunes, where, and the keys its
// decision is filed under. Shared by the decision path (autotuner.cpp) and
// a decision adopted from elsewhere (autotuner_adopt.cpp).
#pragma once

#include "kiln/core/problem.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln::internal {

struct TuneCall {
  const TunableKernel& kernel;
  const ArgList& args;
  Device& device;
  const TuneOptions& options;
  ProblemKey problem;
  CompileContext context;
  DeviceIdentity identity;
  Hash128 definition;
  Hash128 key;  // the tuning key: problem, device, toolchain, environment, definition
  // Tune again, whatever was decided or remembered before: TuneOptions'
  // cache.retune, or KILN_RETUNE=1 for this process's first decision of
  // the key.
  bool retune = false;
};

// The call of `kernel` on `args` with `options`, its keys computed.
TuneCall make_call(const TunableKernel& kernel, const ArgList& args, Device& device,
                   const TuneOptions& options, const ToolchainFingerprint& toolchain);

// `result` once `st` says it was served, else the error.
Result<TuneResult> served(const Status& st, TuneResult& result);

}  // namespace kiln::internal
