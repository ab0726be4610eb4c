// kiln cache ls: every artifact entry, tuning record and remembered failure.
// (cache_common.hpp has what the subcommands share).
#include "cache_common.hpp"

#include <ctime>
#include <map>

#include "cache_failures.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/failed_configs.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"

namespace kiln::tool {

namespace {

// A string field of an entry's metadata for the listing; "?" when absent or
// of another type (value() would throw for that, out of `kiln cache ls`).
std::string meta_text(const nlohmann::json& meta, const char* key) {
  const auto it = meta.find(key);
  return it != meta.end() && it->is_string() ? it->get<std::string>() : "?";
}

std::string local_time(std::int64_t ns) {
  std::time_t t = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

void run_ls(const CacheOutput& c) {
  if (no_cache_at(
          c, {{"artifacts", nlohmann::json::array()}, {"tuning_records", nlohmann::json::array()}}))
    return;
  OpenCaches caches;
  auto& [artifacts, tuning] = caches;
  nlohmann::json entries = nlohmann::json::array();
  std::string text = "Artifacts (" + artifacts.dir().string() + ")\n";
  std::map<Hash128, std::uint64_t> program_sizes;
  std::vector<ArtifactFileInfo> files = artifacts.scan(/*check=*/true);
  for (const auto& f : files) {
    if (f.is_program) program_sizes[f.key] = f.size;
  }
  for (const auto& f : files) {
    // Programs are listed through the entries that name them: one key,
    // one line, as before programs were stored once.
    if (f.temporary || f.is_program) continue;
    nlohmann::json e = {{"key", f.key.hex()},
                        {"size", f.size},
                        {"last_use", local_time(f.last_use)},
                        {"path", f.path.string()},
                        {"meta", f.meta}};
    if (!f.problem.empty()) e["problem"] = f.problem;
    auto program = program_sizes.find(f.program);
    if (f.problem.empty()) {
      e["program"] = f.program.hex();
      if (program != program_sizes.end()) e["program_size"] = program->second;
    }
    entries.push_back(e);
    std::string what = !f.problem.empty() ? "BROKEN: " + f.problem
                       : program == program_sizes.end()
                           ? "MISSING PROGRAM " + f.program.hex()
                           : meta_text(f.meta, "format") + " " + meta_text(f.meta, "arch") +
                                 "  program " + f.program.hex().substr(0, 8) + " (" +
                                 human_size(program->second) + ")";
    text += "  " + f.key.hex() + "  " + human_size(f.size) + "  " + local_time(f.last_use) + "  " +
            what + "\n";
  }
  nlohmann::json records = nlohmann::json::array();
  text += "Tuning records (" + tuning.dir().string() + ")\n";
  for (const auto& r : tuning.records()) {
    records.push_back(r.to_json());
    char time[32];
    std::snprintf(time, sizeof time, "%.4g ms", r.best_time_ms);
    text += "  " + r.problem.canonical() + "  on " + r.device.name + " (" + r.device.arch + ")  " +
            r.best.to_string() + "  " + time + "\n";
  }
  for (const auto& f : tuning.files()) {
    if (!f.problem.empty()) text += "  BROKEN: " + f.problem + "\n";
  }
  const FailedConfigs failures = FailedConfigs::beside(tuning);
  text += "Remembered failures (" + failures.dir().string() +
          "; `kiln cache forget --failures` forgets them)\n";
  nlohmann::json failed = failures_listing(failures, std::time(nullptr), &text);
  std::string why;
  if (artifacts.state() == CacheState::kDisabled && !tuning.writable(&why)) {
    text += "(" + why + ": nothing is read)\n";
  }
  c.emit_with_problems(
      {{"artifacts", entries}, {"tuning_records", records}, {"failures", std::move(failed)}}, text,
      refusals(artifacts, tuning));
}

}  // namespace

void add_cache_ls_command(CLI::App& cache, const CacheOut& out) {
  add_cache_subcommand(cache, *out, "ls", "List artifact entries and tuning records")
      ->callback([out] { run_ls(*out); });
}

}  // namespace kiln::tool
