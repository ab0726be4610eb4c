#include "cache_failures.hpp"

#include <algorithm>

#include "duration_text.hpp"

namespace kiln::tool {

nlohmann::json failed_config_json(const FailedConfig& f, std::int64_t now) {
  return {{"config", f.config.to_json()},
          {"outcome", f.outcome},
          {"reason", f.reason},
          {"failed_at", f.failed_at},
          {"age_s", std::max<std::int64_t>(0, now - f.failed_at)},
          {"skipped_runs", f.skipped_runs},
          {"missing_headers", f.missing_headers}};
}

nlohmann::json failures_listing(const FailedConfigs& failures, std::int64_t now,
                                std::string* text) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : failures.list()) {
    nlohmann::json configs = nlohmann::json::array();
    if (!f.problem_text.empty()) {
      *text += "  BROKEN: " + f.problem_text + "\n";
      out.push_back({{"path", f.path.string()}, {"problem", f.problem_text}});
      continue;
    }
    *text += "  " + f.problem + "  on " + f.device + "\n";
    for (const auto& c : f.failed) {
      configs.push_back(failed_config_json(c, now));
      *text += "    " + c.config.to_string() + "  " + c.outcome + "  " +
               age_text(now - c.failed_at) + " ago, skipped by " + std::to_string(c.skipped_runs) +
               " run(s)\n";
    }
    out.push_back({{"path", f.path.string()},
                   {"kernel", f.kernel},
                   {"problem", f.problem},
                   {"device", f.device},
                   {"failed", std::move(configs)}});
  }
  return out;
}

std::size_t failed_config_count(const std::vector<FailureFile>& files) {
  std::size_t n = 0;
  for (const auto& f : files) n += f.failed.size();
  return n;
}

}  // namespace kiln::tool
