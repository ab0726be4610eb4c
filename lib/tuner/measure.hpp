// Measuring one compiled config on one device: load, one checked run
// against the reference, then warm-up and timed repetitions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "call_state.hpp"
#include "kiln/measurement.hpp"
#include "kiln/tuner.hpp"

namespace kiln::internal {

// Expected outputs by name; absent when correctness is not checked.
using Reference = std::optional<std::map<std::string, std::vector<double>>>;

struct MeasureInputs {
  const TunableKernel* kernel;
  const ArgList* args;
  const CallState* state;
  const Reference* reference;
  const TuneOptions* options;
};

// Never throws for a config's own failure: a Measurement with the outcome
// and the evidence (driver error, comparison) comes back instead.
Measurement measure(Device& device, const Artifact& artifact, const MeasureInputs& in);

// One run of a loaded kernel as the real call makes it: prepare, launch, sync.
Status run_once(Device& device, const LoadedKernel& kernel, const LaunchGeometry& geometry,
                const KernelArgs& packed, const CallState& state);

}  // namespace kiln::internal
