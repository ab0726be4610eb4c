// Artifacts for configs: split a set of configs into those the artifact
// cache already holds and the compile units still to build.
#pragma once

#include <optional>
#include <vector>

#include "kiln/compile/compile_engine.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln::internal {

struct UnitPlan {
  std::vector<Artifact> cached;         // ready at once
  std::vector<CompileUnit> to_compile;  // grouped, only the misses
};

// Specializes and groups `configs`; throws kiln::Error for a config outside
// the space (the caller enumerated it, so that is a bug, not bad input).
UnitPlan plan_units(const TunableKernel& kernel, const std::vector<Config>& configs,
                    const Backend& backend, const CompileContext& context, ArtifactCache* cache,
                    std::size_t group_size);

std::optional<Artifact> cached_artifact(ArtifactCache* cache, const Hash128& key);
// Best effort: a full or read-only cache is logged once and tuning goes on.
void store_artifact(ArtifactCache* cache, const Artifact& artifact);

// The artifact of one config: from the artifact cache, else compiled now on
// the calling thread (and stored). Used outside tuning runs.
Result<Artifact> compile_config(const TunableKernel& kernel, const Config& config,
                                const Backend& backend, const CompileContext& context,
                                ArtifactCache* artifacts, bool* from_cache = nullptr);

}  // namespace kiln::internal
