// kiln cache verify: every entry and tuning file checked; --remove drops broken artifacts.
// (cache_common.hpp has what the subcommands share).
#include "cache_common.hpp"

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"

namespace kiln::tool {

namespace {

void run_verify(const CacheOutput& c, bool remove) {
  if (no_cache_at(c, {{"entries", 0}, {"tuning_records", 0}, {"broken_total", 0}})) return;
  OpenCaches caches;
  auto& [artifacts, tuning] = caches;
  if (artifacts.state() == CacheState::kDisabled) {
    return c.fail("nothing verified: caching is disabled (" + artifacts.state_reason() + ")");
  }
  SweepReport report = artifacts.verify(remove);
  std::string text;
  std::size_t broken = report.broken.size();
  for (const auto& f : report.broken) text += "broken: " + f.problem + "\n";
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : tuning.files()) {
    files.push_back(f.to_json());
    if (!f.problem.empty()) ++broken, text += "broken: " + f.problem + "\n";
    for (const auto& s : f.skipped) ++broken, text += "broken: " + s + "\n";
  }
  // What --remove did, counted, not assumed: it removes artifact files; a
  // broken tuning record stays until a save rewrites its file.
  std::string removed;
  if (remove) {
    removed = " (" + std::to_string(report.removed_entries + report.removed_programs) +
              " artifact files removed";
    if (broken > report.broken.size())
      removed +=
          "; broken tuning records are dropped by the next save into their file: any "
          "`kiln tune` that saves, or `kiln cache clear`";
    removed += ")";
  }
  text += std::to_string(report.entries) + " healthy artifact entries (" +
          std::to_string(report.programs) + " programs), " +
          std::to_string(tuning.records().size()) + " tuning records, " + std::to_string(broken) +
          " broken" + removed + "\n";
  nlohmann::json j = report.to_json();
  j["tuning_files"] = files;
  j["tuning_records"] = tuning.records().size();
  j["broken_total"] = broken;
  std::vector<std::string> problems = refusals(artifacts, tuning);
  if (remove) sweep_problems(report, problems);
  j["refused"] =
      artifacts.state() == CacheState::kRefused || tuning.state() == CacheState::kRefused;
  c.emit_with_problems(j, text, problems);
  if (broken != 0) *c.exit_code = 1;
}

}  // namespace

void add_cache_verify_command(CLI::App& cache, const CacheOut& out) {
  auto remove = std::make_shared<bool>(false);
  CLI::App* verify = add_cache_subcommand(
      cache, *out, "verify", "Check every entry and tuning file; exit 1 when any is broken");
  verify->add_flag("--remove", *remove, "Remove the broken artifact entries");
  verify->callback([out, remove] { run_verify(*out, *remove); });
}

}  // namespace kiln::tool
