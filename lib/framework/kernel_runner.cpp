// KernelRunner: tactics from a Kiln kernel's config space, compiled through
// the artifact cache and the compile pool, launched on one device.
#include "kiln/framework/kernel_runner.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "kiln/cache/artifact_store.hpp"
#include "kiln/compile/compile_engine.hpp"
#include "kiln/compile/compile_run.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"

namespace kiln {
namespace {

CompileContext context_of(const Backend& backend) {
  return CompileContext{backend.toolchain, CacheEnvRegistry::global().snapshot()};
}

// The artifact key of one specialisation (siblings never enter it, so a
// grouped compile stores under the same key).
Hash128 key_of(const TunableKernel& k, const Specialization& spec, const Backend& backend,
               const CompileContext& context) {
  GroupOptions go;
  go.group_size = 1;
  go.arch = backend.arch;
  go.format = backend.format;
  std::vector<CompileUnit> units = group(k.tmpl, {spec}, go);
  return specialization_key(context, *backend.compiler, units.at(0), 0);
}

}  // namespace

KernelRunner::KernelRunner(TunableKernel kernel, Backend backend, Device& device,
                           ArtifactCache* artifacts, Bind bind)
    : TunableRunner("kiln:" + kernel.tmpl.name, definition_hash(kernel).hex().substr(0, 16)),
      kernel_(std::move(kernel)),
      backend_(std::move(backend)),
      device_(device),
      artifacts_(artifacts),
      bind_(std::move(bind)) {
  if (!kernel_.launch) {
    throw Error(ErrorCode::kInvalidArgument, "KernelRunner for '" + kernel_.tmpl.name +
                                                 "': the kernel has no launch rule; set "
                                                 "TunableKernel::launch");
  }
  if (!backend_.compiler) {
    throw Error(ErrorCode::kInvalidArgument,
                "KernelRunner for '" + kernel_.tmpl.name + "': the Backend has no compiler");
  }
  configs_ = kernel_.tmpl.space.enumerate();
  Config def = kernel_.tmpl.space.default_config();
  auto it = std::find(configs_.begin(), configs_.end(), def);
  if (it == configs_.end()) {
    configs_.push_back(def);
    it = configs_.end() - 1;
  }
  default_index_ = static_cast<int>(it - configs_.begin());
}

KernelRunner::~KernelRunner() = default;

Config KernelRunner::config_of(int tactic) const {
  if (tactic == kFallbackTactic) return configs_[default_index_];
  if (tactic < 0 || tactic >= static_cast<int>(configs_.size())) {
    throw Error(ErrorCode::kInvalidArgument,
                "kernel runner '" + id().text() + "': tactic " + std::to_string(tactic) +
                    " is outside its space of " + std::to_string(configs_.size()) + " configs");
  }
  return configs_[tactic];
}

std::string KernelRunner::describe(int tactic) const {
  if (tactic != kFallbackTactic && (tactic < 0 || tactic >= static_cast<int>(configs_.size())))
    return "unknown tactic " + std::to_string(tactic);
  return config_of(tactic).to_string();
}

std::vector<int> KernelRunner::tactics(const ArgList& inputs) {
  ArgList args = bind_ ? bind_(inputs) : inputs;
  ProblemKey problem = problem_key(kernel_.tmpl.name, args);
  std::vector<int> out;
  for (std::size_t i = 0; i < configs_.size(); ++i) {
    if (!kernel_.early_prune || kernel_.early_prune(configs_[i], problem))
      out.push_back(static_cast<int>(i));
  }
  if (kernel_.perf_model && kernel_.top_k > 0 && out.size() > kernel_.top_k) {
    std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
      return kernel_.perf_model(configs_[a], problem) < kernel_.perf_model(configs_[b], problem);
    });
    out.resize(kernel_.top_k);
    std::sort(out.begin(), out.end());
  }
  return out;
}

Status KernelRunner::prepare(const ArgList& inputs, std::span<const int> tactics) {
  (void)inputs;
  std::lock_guard lock(mutex_);
  CompileContext context = context_of(backend_);
  std::vector<Specialization> to_compile;
  std::vector<int> owners;  // tactic of each entry of to_compile
  for (int t : tactics) {
    int index = t == kFallbackTactic ? default_index_ : t;
    if (loaded_.count(index) || failed_.count(index)) continue;
    Specialization spec = kernel_.tmpl.specialize(config_of(index));
    if (artifacts_) {
      if (auto hit = lookup_artifact(*artifacts_, key_of(kernel_, spec, backend_, context))) {
        auto lk = device_.load(*hit);
        if (lk.ok()) {
          loaded_.emplace(index, std::move(*lk));
          continue;
        }
      }
    }
    to_compile.push_back(std::move(spec));
    owners.push_back(index);
  }
  if (to_compile.empty()) return ok_status();
  // Grouped programs on the compile pool: the compile cost of a tuning
  // pass, paid here, outside every timing.
  CompileRunSettings settings;
  settings.arch = backend_.arch;
  settings.format = backend_.format;
  settings.factory = [compiler = backend_.compiler](int) { return compiler; };
  settings.context = context;
  CompileRun run = compile_all(kernel_.tmpl, to_compile, settings);
  for (const UnitResult& unit : run.units) {
    for (std::size_t i = 0; i < unit.entries.size(); ++i) {
      const Config& config = unit.unit.specializations[i].config;
      auto owner = std::find_if(owners.begin(), owners.end(),
                                [&](int idx) { return configs_[idx] == config; });
      if (owner == owners.end()) continue;
      const auto& entry = unit.entries[i];
      if (!entry.ok()) {
        failed_.emplace(*owner, entry.error());
        continue;
      }
      ++compiled_;
      if (artifacts_) {
        auto stored = store_artifact(*artifacts_, *entry);
        if (!stored.ok()) KILN_LOG(kDebug) << "artifact not stored: " << stored.error().message;
      }
      auto lk = device_.load(*entry);
      if (lk.ok())
        loaded_.emplace(*owner, std::move(*lk));
      else
        failed_.emplace(*owner, lk.error());
    }
  }
  return ok_status();
}

Result<const LoadedKernel*> KernelRunner::loaded(int tactic) {
  int index = tactic == kFallbackTactic ? default_index_ : tactic;
  config_of(index);  // throws for a tactic outside the space
  {
    std::lock_guard lock(mutex_);
    if (auto it = loaded_.find(index); it != loaded_.end()) return &it->second;
    if (auto it = failed_.find(index); it != failed_.end()) return it->second;
  }
  int one[] = {index};
  Status st = prepare({}, one);
  if (!st.ok()) return st.error();
  std::lock_guard lock(mutex_);
  if (auto it = loaded_.find(index); it != loaded_.end()) return &it->second;
  if (auto it = failed_.find(index); it != failed_.end()) return it->second;
  return make_error(ErrorCode::kInternal, "kernel runner '" + id().text() + "': tactic " +
                                              std::to_string(tactic) +
                                              " neither loaded nor failed");
}

Status KernelRunner::run(const ArgList& inputs, int tactic) {
  auto lk = loaded(tactic);
  if (!lk.ok()) return lk.error();
  ArgList args = bind_ ? bind_(inputs) : inputs;
  Config config = config_of(tactic);
  LaunchGeometry geometry;
  try {
    geometry = kernel_.launch(config, args);
  } catch (const Error& e) {
    return e.info();
  }
  return launch_with_resets(device_, **lk, kernel_, geometry, args);
}

std::size_t KernelRunner::compiled() const {
  std::lock_guard lock(mutex_);
  return compiled_;
}

}  // namespace kiln
