// What the `kiln cache` subcommands share: see cache_common.hpp.
#include "cache_common.hpp"

#include <cstdio>
#include <filesystem>

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"

namespace kiln::tool {

CLI::App* add_cache_subcommand(CLI::App& cache, CacheOutput& out, const char* name,
                               const char* help) {
  CLI::App* s = cache.add_subcommand(name, help);
  s->add_flag("--json", out.json, "Print one JSON object");
  return s;
}

std::string human_size(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

// The caches whose directory failed the safety checks the tuner applies
// (dir_safety: group- or other-writable, a foreign owner): the tuner uses
// neither, so a listing or a verification that shows them empty or healthy
// would lie. One line per distinct reason.
std::vector<std::string> refusals(const ArtifactCache& artifacts, const TuningCache& tuning) {
  std::vector<std::string> out;
  const bool a = artifacts.state() == CacheState::kRefused;
  const bool t = tuning.state() == CacheState::kRefused;
  if (a && t && artifacts.state_reason() == tuning.state_reason()) {
    out.push_back("cache refused (the tuner will not use it): " + artifacts.state_reason());
    return out;
  }
  if (a)
    out.push_back("artifact cache refused (the tuner will not use it): " +
                  artifacts.state_reason());
  if (t)
    out.push_back("tuning cache refused (the tuner will not use it): " + tuning.state_reason());
  return out;
}

// What a sweep could not do, as lines for emit_with_problems.
void sweep_problems(const SweepReport& report, std::vector<std::string>& problems) {
  if (!report.skipped.empty()) problems.push_back("nothing removed: " + report.skipped);
  if (report.failed_removals > 0) {
    problems.push_back("could not remove " + std::to_string(report.failed_removals) +
                       " artifact files (first: " + report.first_failure + ")");
  }
}

// ls and verify only read: opening the caches would create a missing
// directory (a mistyped KILN_CACHE_DIR, made real by looking at it). When
// there is none, says so and returns true; nothing there is nothing broken.
bool no_cache_at(const CacheOutput& c, nlohmann::json j) {
  const Options& o = Options::global();
  std::error_code ec;
  if (std::filesystem::exists(o.cache_dir, ec) || ec) return false;
  j["cache_dir"] = o.cache_dir.string();
  j["exists"] = false;
  c.emit(j, "no cache at " + o.cache_dir.string() + " (from " + o.cache_dir_source +
                "): nothing compiled or tuned there yet\n");
  return true;
}

}  // namespace kiln::tool
