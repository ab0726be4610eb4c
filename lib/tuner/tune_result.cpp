// What a tune() call hands back: where its config came from, what its
// outputs were checked against, and a launch that applies the kernel's
// reset list.
#include "kiln/core/error.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln {

const char* source_name(ResultSource source) {
  switch (source) {
    case ResultSource::kMemory:
      return "memory";
    case ResultSource::kDisk:
      return "disk";
    case ResultSource::kTuned:
      return "tuned";
    case ResultSource::kUntuned:
      return "default";
    case ResultSource::kNearest:
      return "nearest";
    case ResultSource::kAgreed:
      return "agreed";
    case ResultSource::kFallback:
      return "fallback";
    case ResultSource::kFailed:
      return "failed";
  }
  return "unknown";
}

std::string ReferenceReport::name() const {
  switch (kind) {
    case Kind::kDefault:
      return "default";
    case Kind::kUser:
      return "user";
    case Kind::kConsensus:
      return "consensus of " + std::to_string(agreeing) + " configs";
    case Kind::kNone:
      break;
  }
  return "none";
}

double TuneResult::speedup_over_default() const {
  if (!best || !default_seconds || best->stats.median <= 0) return 1.0;
  return *default_seconds / best->stats.median;
}

Status TuneResult::launch(Device& device, const TunableKernel& tunable, const ArgList& args,
                          Stream* stream) const {
  if (!kernel.valid()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "nothing to launch for " + tunable.tmpl.name + " (source '" +
                          source_name(source) + "'): no config ran correctly and the default {" +
                          config.to_string() +
                          "} could not be built; see the measurements for why");
  }
  return launch_with_resets(device, kernel, tunable, geometry, args, stream);
}

Status launch_with_resets(Device& device, const LoadedKernel& loaded, const TunableKernel& tunable,
                          const LaunchGeometry& geometry, const ArgList& args, Stream* stream) {
  for (const auto& name : tunable.reset_to_zero) {
    const Arg& a = find_arg(args, name);
    if (a.storage_bytes() == 0) continue;
    Status st = device.fill(a.address(), 0, a.storage_bytes(), stream);
    if (!st.ok()) return st;
  }
  LaunchConfig lc;
  lc.grid = geometry.grid;
  lc.block = geometry.block;
  lc.shared_bytes = geometry.shared_bytes;
  lc.stream = stream;
  return device.launch(loaded, lc, pack(args));
}

}  // namespace kiln
