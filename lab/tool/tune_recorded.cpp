// `kiln-lab tune --recorded`: replay_tune on a recorded space, reported as
// `kiln tune` reports a run, plus the fraction of the optimum and the
// simulated wall time.
#include "tune_recorded.hpp"

#include <algorithm>

#include <cstdio>
#include <iostream>

#include "kiln/lab/recorded_space.hpp"
#include "kiln/lab/replay_tune.hpp"
#include "kiln/search/search_plan.hpp"
#include "tune_report.hpp"
#include "warm_from.hpp"

namespace kiln::tool {

namespace {

TuneOptions recorded_options(const RecordedTuneArgs& a) {
  TuneOptions o;
  o.search.strategy = a.search;
  o.search.max_configs = a.max_configs;
  o.search.effort = parse_search_effort(a.effort).value_or(SearchEffort::kDefault);
  o.search.seed = a.seed;
  o.search.batch = a.pacing.batch;
  o.search.in_flight = a.pacing.in_flight;
  o.search.warm_start = a.warm_start;
  o.search.warm_start_devices =
      parse_warm_start_devices(a.warm_start_devices).value_or(WarmStartDevices::kAny);
  o.pipeline.overlap = !a.no_pipeline;
  o.pipeline.group_size = a.group_size;
  o.pipeline.compile_threads = a.threads;
  o.pipeline.budget_seconds = a.budget_s;
  return o;
}

TuneReport make_report(const RecordedTuneArgs& a, const RecordedSpace& space,
                       const ReplayTuneResult& run) {
  TuneReport report;
  report.kernel = space.kernel;
  report.template_name = space.kernel;
  report.backend = "recorded";
  report.device = {{"name", space.device}, {"arch", "recorded"}};
  report.source = "tuned";
  report.not_saved_reason = "a replay of a recorded space saves nothing";
  report.settings = {{"recorded", a.file},
                     {"pipeline", !a.no_pipeline},
                     {"group_size", a.group_size ? a.group_size : 1},
                     {"threads", a.threads > 0 ? a.threads : 1},
                     {"search", a.search},
                     {"effort", a.effort},
                     {"max_configs", a.max_configs},
                     {"seed", a.seed},
                     {"in_flight", a.pacing.in_flight},
                     {"rounds", a.pacing.batch},
                     {"budget_s", a.budget_s},
                     {"budget_simulated", true},
                     {"warm_from", a.warm_from},
                     {"warm_start", a.warm_from.empty() ? 0 : a.warm_start},
                     {"warm_start_devices", a.warm_start_devices}};
  report.stats = run.stats;
  report.rows = rows_from(run.measurements);
  finish_report(report, run.winner ? run.winner->config : Config(), run.default_config);
  return report;
}

// Configs the replay compiled and ran (or saw fail): a config the budget
// cancelled or a prune removed was never measured, though it has a row.
std::size_t measured(const ReplayTuneResult& run) {
  return static_cast<std::size_t>(
      std::count_if(run.measurements.begin(), run.measurements.end(), [](const Measurement& m) {
        return m.outcome != Outcome::kCancelled && m.outcome != Outcome::kPruned;
      }));
}

// What only a replay knows: the file, its optimum, and the simulated run.
// Where the objective is not the run time, best_ms and the report's times
// are run times at the optimum's figure (RecordedConfig::time_ms): the
// figures themselves and the best's recorded run time come beside them.
nlohmann::json recorded_json(const RecordedTuneArgs& a, const RecordedSpace& space,
                             const ReplayTuneResult& run, const WarmFrom& warm) {
  const RecordedConfig* best = run.best ? space.find(*run.best) : nullptr;
  return {{"file", a.file},
          {"kernel", space.kernel},
          {"device", space.device},
          {"configs", space.configs.size()},
          {"objective", space.objective},
          {"higher_is_better", space.higher_is_better},
          {"optimum", space.optimum},
          {"optimum_ms", space.optimum_ms},
          {"best", run.best ? run.best->to_json() : nlohmann::json()},
          {"best_ms", run.best ? nlohmann::json(run.best_ms) : nlohmann::json()},
          {"best_objective", best ? nlohmann::json(best->objective) : nlohmann::json()},
          {"best_run_ms", best ? nlohmann::json(best->run_ms) : nlohmann::json()},
          {"measured", measured(run)},
          {"budget_cancelled", run.budget_cancelled},
          {"clock_stalls", run.stalls},
          {"warm_from", warm.used},
          {"warm_from_left_out", warm.left_out},
          {"warm_started", run.stats.warm_started}};
}

}  // namespace

int run_tune_recorded(const RecordedTuneArgs& args) {
  Result<RecordedSpace> space = read_recorded_space(args.file);
  if (!space) {
    std::fprintf(stderr, "kiln-lab tune: %s\n", space.error().message.c_str());
    return 2;
  }
  Result<std::vector<RecordedSpace>> others = read_warm_from(args.warm_from);
  if (!others) {
    std::fprintf(stderr, "kiln-lab tune: %s\n", others.error().message.c_str());
    return 2;
  }
  const WarmFrom warm = warm_from_for(*space, *others);
  // Said on stderr, so that --json's stdout stays one document.
  for (const std::string& why : warm.left_out)
    std::fprintf(stderr, "kiln-lab tune: --warm-from %s: left out\n", why.c_str());
  Result<ReplayTuneResult> run = replay_tune(*space, recorded_options(args), warm.records);
  if (!run) {
    std::fprintf(stderr, "kiln-lab tune: %s\n", run.error().describe().c_str());
    return run.error().code == ErrorCode::kInvalidArgument ? 2 : 1;
  }
  TuneReport report = make_report(args, *space, *run);
  if (args.json) {
    nlohmann::json out = report.to_json();
    out["fraction_of_optimum"] = run->fraction;
    out["simulated_wall_s"] = run->simulated_seconds;
    out["recorded"] = recorded_json(args, *space, *run, warm);
    std::cout << out.dump(2) << "\n";
  } else {
    report.print(stdout);
    if (!args.warm_from.empty())
      std::printf("warm start: %llu seed(s) from %zu other device(s)' recorded space(s)\n",
                  static_cast<unsigned long long>(run->stats.warm_started), warm.used.size());
    const RecordedConfig* best = run->best ? space->find(*run->best) : nullptr;
    if (space->by_time()) {
      std::printf("recorded: %s: %zu configs on %s, optimum %.4g ms\n", args.file.c_str(),
                  space->configs.size(), space->device.c_str(), space->optimum_ms);
      if (best)
        std::printf("best found: %s at %.4g ms = %.3f of the optimum, %zu configs measured\n",
                    run->best->to_string().c_str(), run->best_ms, run->fraction, measured(*run));
    } else {
      const char* o = space->objective.c_str();
      std::printf(
          "recorded: %s: %zu configs on %s, ranked by %s (%s is better), optimum %.4g %s (run "
          "time %.4g ms)\n",
          args.file.c_str(), space->configs.size(), space->device.c_str(), o,
          space->higher_is_better ? "higher" : "lower", space->optimum, o, space->optimum_ms);
      if (best)
        std::printf(
            "best found: %s at %.4g %s (run time %.4g ms) = %.3f of the optimum, %zu configs "
            "measured\n",
            run->best->to_string().c_str(), best->objective, o, best->run_ms, run->fraction,
            measured(*run));
      std::printf(
          "(a time above is a config's run time at the optimum's %s: the optimum's run time "
          "over the config's fraction of it, so that the fastest is the best by %s)\n",
          o, o);
    }
    std::printf(
        "simulated wall time: %.4g s on %d compile worker(s), %s%s (times above are "
        "simulated)\n",
        run->simulated_seconds, args.threads > 0 ? args.threads : 1,
        args.no_pipeline ? "compile then benchmark" : "pipelined",
        run->budget_cancelled
            ? (", the budget stopped " + std::to_string(run->budget_cancelled) + " config(s)")
                  .c_str()
            : "");
  }
  return report.winner ? 0 : 1;
}

}  // namespace kiln::tool
