// kiln cache stats: sizes, counts and the state of both caches.
// (cache_common.hpp has what the subcommands share).
#include "cache_common.hpp"

#include "cache_failures.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/failed_configs.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"

namespace kiln::tool {

namespace {

nlohmann::json state_json(CacheState state, const std::string& reason) {
  return {{"state", cache_state_name(state)}, {"reason", reason}};
}

void run_stats(const CacheOutput& c) {
  OpenCaches caches;
  auto& [artifacts, tuning] = caches;
  const Options& o = Options::global();
  std::uint64_t entries = 0, programs = 0, bytes = 0, temps = 0;
  for (const auto& f : artifacts.scan(false)) {
    (f.temporary ? temps : f.is_program ? programs : entries) += 1;
    bytes += f.size;
  }
  std::size_t records = tuning.records().size();
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : tuning.files()) files.push_back(f.to_json());
  const std::vector<FailureFile> failure_files = FailedConfigs::beside(tuning).list();
  const std::size_t failed_configs = failed_config_count(failure_files);
  nlohmann::json j = {{"cache_dir", o.cache_dir.string()},
                      {"artifacts",
                       {{"dir", artifacts.dir().string()},
                        {"entries", entries},
                        {"programs", programs},
                        {"bytes", bytes},
                        {"max_bytes", artifacts.max_bytes()},
                        {"temporary_files", temps},
                        {"status", state_json(artifacts.state(), artifacts.state_reason())}}},
                      {"tuning",
                       {{"dir", tuning.dir().string()},
                        {"records", records},
                        {"files", files},
                        {"failed_configs", failed_configs},
                        {"failure_files", failure_files.size()},
                        {"status", state_json(tuning.state(), tuning.state_reason())}}}};
  std::string text =
      "Cache dir   " + o.cache_dir.string() + "  (from " + o.cache_dir_source + ")\n";
  text += "Artifacts   " + std::to_string(entries) + " entries (" + std::to_string(programs) +
          " programs), " + human_size(bytes) + " of " + human_size(artifacts.max_bytes()) + ", " +
          std::to_string(temps) + " temporary files; " + cache_state_name(artifacts.state()) + "\n";
  text += "Tuning      " + std::to_string(records) + " records in " +
          std::to_string(tuning.files().size()) + " files; " + cache_state_name(tuning.state()) +
          "\n";
  text += "Failures    " + std::to_string(failed_configs) + " configs remembered as failed, in " +
          std::to_string(failure_files.size()) + " files\n";
  if (!artifacts.state_reason().empty()) text += "  " + artifacts.state_reason() + "\n";
  c.emit_with_problems(j, text, refusals(artifacts, tuning));
}

}  // namespace

void add_cache_stats_command(CLI::App& cache, const CacheOut& out) {
  add_cache_subcommand(cache, *out, "stats", "Sizes, counts and the state of both caches")
      ->callback([out] { run_stats(*out); });
}

}  // namespace kiln::tool
