#include "kiln/tuner/tuning_stats.hpp"

#include <nlohmann/json.hpp>

namespace kiln {

void KernelStats::merge(const KernelStats& o) {
  cache_hits += o.cache_hits;
  cache_misses += o.cache_misses;
  configs += o.configs;
  compiled += o.compiled;
  artifact_hits += o.artifact_hits;
  benchmarked += o.benchmarked;
  failed += o.failed;
  for (const auto& [reason, n] : o.failed_by_reason) failed_by_reason[reason] += n;
  skipped_failed_before += o.skipped_failed_before;
  warm_started += o.warm_started;
  resumed += o.resumed;
  finalists += o.finalists;
  finalist_seconds += o.finalist_seconds;
  served_nearest += o.served_nearest;
  served_default += o.served_default;
  compile_seconds += o.compile_seconds;
  benchmark_seconds += o.benchmark_seconds;
  overlap_seconds += o.overlap_seconds;
  wall_seconds += o.wall_seconds;
}

nlohmann::json KernelStats::to_json() const {
  return {{"cache_hits", cache_hits},
          {"cache_misses", cache_misses},
          {"configs", configs},
          {"compiled", compiled},
          {"artifact_hits", artifact_hits},
          {"benchmarked", benchmarked},
          {"failed", failed},
          {"failed_by_reason", failed_by_reason},
          {"skipped_failed_before", skipped_failed_before},
          {"warm_started", warm_started},
          {"resumed", resumed},
          {"finalists", finalists},
          {"finalist_seconds", finalist_seconds},
          {"served_nearest", served_nearest},
          {"served_default", served_default},
          {"compile_seconds", compile_seconds},
          {"benchmark_seconds", benchmark_seconds},
          {"overlap_seconds", overlap_seconds},
          {"wall_seconds", wall_seconds}};
}

void TuningStatistics::cache_hit(const std::string& kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++kernels_[kernel].cache_hits;
}

void TuningStatistics::cache_miss(const std::string& kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++kernels_[kernel].cache_misses;
}

void TuningStatistics::outcome(const std::string& kernel, Outcome outcome) {
  std::lock_guard<std::mutex> lock(mutex_);
  KernelStats& k = kernels_[kernel];
  if (outcome == Outcome::kOk) {
    ++k.benchmarked;
  } else {
    ++k.failed;
    ++k.failed_by_reason[outcome_name(outcome)];
  }
}

void TuningStatistics::add(const std::string& kernel, const KernelStats& delta) {
  std::lock_guard<std::mutex> lock(mutex_);
  kernels_[kernel].merge(delta);
}

KernelStats TuningStatistics::kernel(const std::string& kernel) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = kernels_.find(kernel);
  return it == kernels_.end() ? KernelStats{} : it->second;
}

KernelStats TuningStatistics::total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  KernelStats t;
  for (const auto& [name, k] : kernels_) t.merge(k);
  return t;
}

std::map<std::string, KernelStats> TuningStatistics::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kernels_;
}

nlohmann::json TuningStatistics::to_json() const {
  nlohmann::json kernels = nlohmann::json::object();
  for (const auto& [name, k] : snapshot()) kernels[name] = k.to_json();
  return {{"kernels", kernels}, {"total", total().to_json()}};
}

}  // namespace kiln
