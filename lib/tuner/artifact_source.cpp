// Artifacts for configs: the artifact cache first, the compiler second.
#include "kiln/tuner/artifact_source.hpp"

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/artifact_store.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"

namespace kiln::internal {

std::optional<Artifact> cached_artifact(ArtifactCache* cache, const Hash128& key) {
  if (!cache) return std::nullopt;
  auto artifact = lookup_artifact(*cache, key);
  // Metadata of another entry is never served.
  if (artifact && artifact->key != key) return std::nullopt;
  return artifact;
}

void store_artifact(ArtifactCache* cache, const Artifact& artifact) {
  if (!cache || !artifact.binary) return;
  auto stored = kiln::store_artifact(*cache, artifact);
  if (!stored.ok()) {
    log_once(LogLevel::kWarn, "artifact-store:" + stored.error().message,
             "cannot store compiled artifacts (tuning goes on): " + stored.error().describe());
  }
}

UnitPlan plan_units(const TunableKernel& kernel, const std::vector<Config>& configs,
                    const Backend& backend, const CompileContext& context, ArtifactCache* cache,
                    std::size_t group_size) {
  std::vector<Specialization> specs;
  specs.reserve(configs.size());
  for (const auto& c : configs) specs.push_back(kernel.tmpl.specialize(c));
  GroupOptions go;
  go.group_size = group_size;
  go.arch = backend.arch;
  go.format = backend.format;
  UnitPlan plan;
  for (CompileUnit& unit : group(kernel.tmpl, specs, go)) {
    CompileUnit missing = unit;
    missing.specializations.clear();
    for (std::size_t i = 0; i < unit.specializations.size(); ++i) {
      Hash128 key = specialization_key(context, *backend.compiler, unit, i);
      if (auto hit = cached_artifact(cache, key)) {
        // NOTES: the key covers the code, not the config: another config
        // (of this kernel, or of another kernel with the same source and
        // entry) that compiles to the same program shares the entry. The
        // config and kernel are this request's, or the measurement and the
        // saved winner name a config outside this kernel's space.
        hit->kernel = unit.specializations[i].kernel;
        hit->config = unit.specializations[i].config;
        plan.cached.push_back(std::move(*hit));
      } else
        missing.specializations.push_back(unit.specializations[i]);
    }
    if (!missing.specializations.empty()) plan.to_compile.push_back(std::move(missing));
  }
  return plan;
}

Result<Artifact> compile_config(const TunableKernel& kernel, const Config& config,
                                const Backend& backend, const CompileContext& context,
                                ArtifactCache* artifacts, bool* from_cache) {
  UnitPlan plan = plan_units(kernel, {config}, backend, context, artifacts, 1);
  if (from_cache) *from_cache = !plan.cached.empty();
  if (!plan.cached.empty()) return plan.cached.front();
  UnitResult r = compile_isolated(*backend.compiler, plan.to_compile.at(0), CancelToken(), context);
  if (!r.entries.at(0).ok()) return r.entries[0].error();
  store_artifact(artifacts, *r.entries[0]);
  return *r.entries[0];
}

}  // namespace kiln::internal
