// kiln cache clear: every artifact entry and tuning file removed.
// (cache_common.hpp has what the subcommands share).
#include "cache_common.hpp"

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"

namespace kiln::tool {

namespace {

void run_clear(const CacheOutput& c) {
  OpenCaches caches;
  auto& [artifacts, tuning] = caches;
  if (artifacts.state() != CacheState::kReady) {
    return c.fail(std::string("cannot clear a ") + cache_state_name(artifacts.state()) +
                  " cache: " + artifacts.state_reason());
  }
  SweepReport report = artifacts.clear();
  std::vector<std::string> problems;
  sweep_problems(report, problems);
  Result<std::size_t> files = tuning.clear();
  std::size_t removed_files = 0;
  if (files) {
    removed_files = *files;
  } else {
    problems.push_back(files.error().message);
    auto removed = files.error().details.find("removed");
    if (removed != files.error().details.end()) removed_files = std::stoul(removed->second);
  }
  nlohmann::json j = {{"removed_entries", report.removed_entries},
                      {"removed_programs", report.removed_programs},
                      {"removed_bytes", report.removed_bytes},
                      {"removed_tuning_files", removed_files},
                      {"failed_removals", report.failed_removals}};
  c.emit_with_problems(j,
                       "removed " + std::to_string(report.removed_entries) + " artifact entries (" +
                           human_size(report.removed_bytes) + ") and " +
                           std::to_string(removed_files) + " tuning files\n",
                       problems);
}

}  // namespace

void add_cache_clear_command(CLI::App& cache, const CacheOut& out) {
  add_cache_subcommand(cache, *out, "clear", "Remove every artifact entry and tuning file")
      ->callback([out] { run_clear(*out); });
}

}  // namespace kiln::tool
