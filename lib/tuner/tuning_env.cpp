// The tuning overrides from the environment (with_tuning_env) and what
// KILN_PRINT_AUTOTUNING and KILN_AUTOTUNE_LOG report.
#include "tuning_env.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "kiln/core/log.hpp"
#include "kiln/search/search.hpp"
#include "kiln/tuner/tune_options.hpp"

namespace kiln {

TuneOptions with_tuning_env(TuneOptions o, const Options& env) {
  bool search_set = !env.search.empty();
  if (search_set && env.search != kAutoSearch && !find_search_strategy(env.search)) {
    log_once(LogLevel::kWarn, "KILN_SEARCH:" + env.search,
             "KILN_SEARCH='" + env.search + "' is not a search strategy: use auto, " +
                 search_strategy_names() + " (keeping the kernel's own, " + o.search.strategy +
                 ")");
    search_set = false;
  } else if (search_set) {
    o.search.strategy = env.search;
  }
  if (!env.effort.empty()) {
    // NOTES: an effort means something only to the auto plan; without a
    // KILN_SEARCH it brings the plan, with its budget, over the declaration's.
    if (!search_set) {
      o.search.strategy = kAutoSearch;
      o.search.max_configs = 0;
    }
    if (o.search.strategy == kAutoSearch)
      o.search.effort = *parse_search_effort(env.effort);
    else
      log_once(LogLevel::kWarn, "KILN_EFFORT:" + o.search.strategy,
               "KILN_EFFORT='" + env.effort + "' is read with the auto search only; the search " +
                   o.search.strategy + " runs without it");
  }
  if (env.budget_seconds) o.pipeline.budget_seconds = *env.budget_seconds;
  return o;
}

namespace internal {

std::string decision_line(const std::string& kernel, const ProblemKey& problem,
                          const TuneResult& result) {
  std::size_t measured = 0;
  for (const auto& m : result.measurements) measured += m.outcome != Outcome::kCancelled;
  char time[64] = "no time";
  if (result.best) std::snprintf(time, sizeof time, "%.6g ms", result.best->stats.median * 1e3);
  char wall[32];
  std::snprintf(wall, sizeof wall, "%.3g", result.stats.wall_seconds);
  return "kiln autotuning " + kernel + " for " + problem.canonical() + " finished after " + wall +
         " s: " + std::to_string(measured) + " configs measured; best config {" +
         result.config.to_string() + "} (" + source_name(result.source) + ", " + time + ")";
}

Status append_measurements(const std::string& path, const std::string& kernel,
                           const ProblemKey& problem, const TuneResult& result, bool interrupted) {
  // A run id that no other run shares: this process, the time, a counter.
  static std::atomic<std::uint64_t> runs{0};
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const std::string run =
      std::to_string(getpid()) + "-" +
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()) + "-" +
      std::to_string(runs.fetch_add(1));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return make_error(ErrorCode::kIo,
                      "KILN_AUTOTUNE_LOG='" + path + "' cannot be opened: " + std::strerror(errno));
  Status st = ok_status();
  for (const auto& m : result.measurements) {
    nlohmann::json j = {{"kernel", kernel},
                        {"key", problem.canonical()},
                        {"run", run},
                        {"config", m.config.to_json()},
                        {"status", outcome_name(m.outcome)}};
    if (m.ok()) {
      j["median_s"] = m.stats.median;
      j["reps"] = m.stats.reps;
    } else {
      j["reason"] = m.reason();
    }
    j["winner"] = result.best && result.best->config == m.config;
    if (interrupted) j["interrupted"] = true;
    const std::string line = j.dump() + "\n";
    if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()) && st.ok())
      st = make_error(ErrorCode::kIo,
                      "KILN_AUTOTUNE_LOG='" + path + "': a write failed: " + std::strerror(errno));
  }
  ::close(fd);
  return st;
}

void report_tuning(const std::string& kernel, const ProblemKey& problem,
                   const Result<TuneResult>& result, const Options& env) {
  if (!result.ok()) return;
  if (env.print_autotuning)
    std::fprintf(stderr, "%s\n", decision_line(kernel, problem, *result).c_str());
  if (env.autotune_log.empty()) return;
  Status st = append_measurements(env.autotune_log.string(), kernel, problem, *result);
  if (!st.ok()) log_once(LogLevel::kWarn, "KILN_AUTOTUNE_LOG", st.error().message);
}

void report_interrupted(const std::string& kernel, const ProblemKey& problem,
                        const TuneResult& partial, const Options& env) {
  if (env.print_autotuning) {
    std::size_t measured = 0;
    for (const auto& m : partial.measurements) measured += m.ok();
    std::fprintf(stderr,
                 "kiln autotuning %s for %s interrupted after %zu configs measured; no winner "
                 "saved\n",
                 kernel.c_str(), problem.canonical().c_str(), measured);
  }
  if (env.autotune_log.empty()) return;
  // Cancelled configs were never measured: no line for them.
  TuneResult measured;
  for (const auto& m : partial.measurements)
    if (m.outcome != Outcome::kCancelled) measured.measurements.push_back(m);
  Status st = append_measurements(env.autotune_log.string(), kernel, problem, measured, true);
  if (!st.ok()) log_once(LogLevel::kWarn, "KILN_AUTOTUNE_LOG", st.error().message);
}

}  // namespace internal
}  // namespace kiln
