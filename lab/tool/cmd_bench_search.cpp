// kiln-lab bench search --recorded FILE... [--strategy S]... [--seeds N]
//   [--budget-fraction F | --max-configs N] [--threads P] [--json] [--plot FILE.svg]
//   [--trace FILE.jsonl] [--warm-from FILE... [--warm-start N] [--device-prior]]
// Replays each search strategy on recorded spaces (Kernel Tuner cache files
// of real GPU measurements, kiln/lab/search_replay.hpp): the best-so-far
// fraction of the file's optimum against the share of the space measured
// and against simulated time through the pipeline (search_time_curves.hpp),
// median and quartiles over seeds, as a table, JSON and an SVG plot; and the
// simulated wall time of one tuning done three ways (search_wall_times.hpp).
// --warm-from: other devices' recorded spaces of the kernel stand in for a
// shared tuning cache, and every replay starts warm from what they found
// fast (kiln/tuner/warm_start.hpp); for each file, a file of its own device
// is left out, so one list serves a leave-one-out over several devices.
// --device-prior: their times are also gp's prior (DevicePrior), for research.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "kiln/lab/search_replay.hpp"
#include "kiln/search/search.hpp"
#include "kiln/tuner/warm_start.hpp"
#include "lab_commands.hpp"
#include "option_checks.hpp"
#include "parallel_runs.hpp"
#include "sample_stats.hpp"
#include "search_outputs.hpp"
#include "search_time_curves.hpp"
#include "search_wall_times.hpp"
#include "svg_curves.hpp"
#include "warm_from.hpp"

namespace kiln::tool {
namespace {

struct SearchBenchArgs {
  std::vector<std::string> files;
  std::vector<std::string> strategies;
  int seeds = 25;
  int first_seed = 1;  // seeds first_seed .. first_seed + seeds - 1
  double budget_fraction = 0.10;
  std::size_t max_configs = 0;
  int threads = 2;  // simulated compile workers of the time curves
  bool json = false;
  std::string plot;
  std::string trace;    // JSON Lines: every replayed measurement, in order
  SearchPacing pacing;  // --rounds / --in-flight
  std::vector<std::string> warm_from;
  std::size_t warm_start = 3;
  bool device_prior = false;  // --device-prior: the --warm-from files' times as gp's prior
};

// One line per measurement of one seed's replay, in the order measured:
// where a search spent its budget, which the curves' medians hide.
void write_trace(std::ostream& out, const RecordedSpace& space, const std::string& strategy,
                 std::uint64_t seed, const ReplayCurve& curve) {
  for (std::size_t i = 0; i < curve.measured.size(); ++i) {
    const RecordedConfig* r = space.find(curve.measured[i]);
    out << nlohmann::json{{"file", space.path.string()},
                          {"strategy", strategy},
                          {"seed", seed},
                          {"index", i},
                          {"config", curve.measured[i].to_json()},
                          {"fraction", r && r->time_ms ? space.optimum_ms / *r->time_ms : 0.0},
                          {"best_so_far", curve.fraction[i]}}
               .dump()
        << "\n";
  }
}

// The share of `v` (one value per seed) at or above `x`.
double share_at_least(const std::vector<double>& v, double x) {
  const auto n = std::count_if(v.begin(), v.end(), [x](double f) { return f >= x; });
  return static_cast<double>(n) / static_cast<double>(v.size());
}

// The budgets the table reports, as shares of the space.
const std::vector<double> kShares = {0.005, 0.01, 0.02, 0.05, 0.10};

struct StrategyResult {
  std::string name;
  // Per point of the curve (1..budget measurements): the fraction over seeds.
  std::vector<std::vector<double>> by_point;
};

struct FileResult {
  RecordedSpace space;
  std::size_t budget = 0;
  std::vector<StrategyResult> strategies;
  WarmFrom warm;              // --warm-from, for this file
  std::vector<Config> seeds;  // the warm start's, measured first in every replay
  // The other devices' times, the strategy's prior in every replay (null: none).
  std::shared_ptr<const DevicePrior> prior;
  TimeCurves time;  // best-so-far against simulated seconds
  WallTimes wall;   // serial, batch, pipeline for P = 1, 2, 16
};

// An SVG of every file's median curves (quartile bands), log x axis: a row
// against configs measured, and below it a row against simulated seconds.
std::string plot_svg(const std::vector<FileResult>& files) {
  const int panel_w = 460, panel_h = 300, margin = 55;
  const int width = panel_w * static_cast<int>(std::min<std::size_t>(files.size(), 3));
  const int rows = static_cast<int>((files.size() + 2) / 3);
  std::ostringstream s;
  s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='"
    << 2 * rows * panel_h
    << "' font-family='sans-serif' font-size='11'>\n<rect width='100%' height='100%' "
       "fill='white'/>\n";
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  for (std::size_t f = 0; f < files.size(); ++f) {
    const FileResult& file = files[f];
    PlotPanel p;
    p.x0 = static_cast<double>((f % 3) * panel_w + margin);
    p.y0 = static_cast<double>((f / 3) * panel_h + 30);
    p.w = panel_w - margin - 15, p.h = panel_h - 80;
    const double n = static_cast<double>(file.space.configs.size());
    // A budget of one config has no width on a log axis: the axis then
    // spans one decade, so the single point sits at its left end.
    const double lo = std::log10(1.0 / n),
                 hi = std::max(lo + 1, std::log10(static_cast<double>(file.budget) / n));
    auto px = [&](double k) { return p.x0 + p.w * (std::log10(k / n) - lo) / (hi - lo); };
    const std::string title = file.space.kernel + " on " + file.space.device + " (" +
                              std::to_string(file.space.configs.size()) + " configs)";
    svg_panel_frame(s, p, title);
    for (double share : {0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0}) {
      const double k = share * n;
      if (k < 1 || k > static_cast<double>(file.budget)) continue;
      std::ostringstream label;
      label << share * 100 << "%";
      svg_x_tick(s, p, px(std::floor(k)), label.str());
    }
    s << "<text x='" << p.x0 + p.w / 2 - 80 << "' y='" << p.y0 + p.h + 30
      << "'>share of the space measured (log)</text>\n";
    for (std::size_t i = 0; i < file.strategies.size(); ++i) {
      const StrategyResult& st = file.strategies[i];
      std::vector<BandPoint> points;
      for (std::size_t k = 1; k <= st.by_point.size(); ++k) {
        const auto& v = st.by_point[k - 1];
        points.push_back(
            {px(static_cast<double>(k)), quantile(v, 0.25), quantile(v, 0.5), quantile(v, 0.75)});
      }
      svg_band(s, p, points, colors[i % 6], st.name, i);
    }
    PlotPanel below = p;
    below.y0 += rows * panel_h;
    file.time.svg_panel(s, below, file.space.kernel + " on " + file.space.device + ", by time",
                        colors);
  }
  s << "</svg>\n";
  return s.str();
}

// Each strategy once: a repeat would replay the same seeds again and print
// a second, identical row. Every one when none is named; nullopt, having
// said why, for an unknown one.
std::optional<std::vector<std::string>> distinct_strategies(const SearchBenchArgs& args) {
  std::vector<std::string> strategies;
  for (const auto& name : args.strategies) {
    if (std::find(strategies.begin(), strategies.end(), name) == strategies.end())
      strategies.push_back(name);
    else
      std::fprintf(stderr,
                   "kiln-lab bench search: --strategy %s is given twice; replaying it once\n",
                   name.c_str());
  }
  if (strategies.empty())
    for (const auto& info : search_strategies()) strategies.push_back(info.name);
  for (const auto& name : strategies) {
    if (!find_search_strategy(name)) {
      std::fprintf(stderr, "kiln-lab bench search: unknown strategy \"%s\"; use one of %s\n",
                   name.c_str(), search_strategy_names().c_str());
      return std::nullopt;
    }
  }
  return strategies;
}

// Each recorded space once, as each strategy: a repeat (however spelled)
// would replay it again and print a second, identical table and panel.
// Every one is read before the outputs are opened and anything runs: a bad
// last file was said after the others' replays, and opening had already
// emptied an existing --plot and begun the --trace. False, having said why,
// for a file that cannot be read.
bool read_distinct_spaces(const SearchBenchArgs& args, std::vector<RecordedSpace>& spaces) {
  std::vector<std::string> files;
  for (const auto& path : args.files) {
    const auto first = std::find_if(files.begin(), files.end(),
                                    [&](const std::string& f) { return names_one_file(f, path); });
    if (first == files.end())
      files.push_back(path);
    else
      std::fprintf(
          stderr,
          "kiln-lab bench search: --recorded %s is given twice (as %s); replaying it once\n",
          path.c_str(), first->c_str());
  }
  if (outputs_clash(args.trace, args.plot, args.files)) return false;
  for (const auto& path : files) {
    Result<RecordedSpace> space = read_recorded_space(path);
    if (!space) {  // a bad input, as `kiln-lab tune --recorded` says it: exit 2
      std::fprintf(stderr, "kiln-lab bench search: %s\n", space.error().message.c_str());
      return false;
    }
    spaces.push_back(std::move(*space));
  }
  return true;
}

// Every seed of `name` replayed on `file` (side by side), into its curve
// points and the trace. False, having said why, when a replay failed.
bool replay_strategy(FileResult& file, const std::string& name, const SearchBenchArgs& args,
                     std::ofstream& trace) {
  StrategyResult st;
  st.name = name;
  st.by_point.assign(file.budget, {});
  std::vector<std::optional<Result<ReplayCurve>>> curves(static_cast<std::size_t>(args.seeds));
  run_parallel(curves.size(), [&](std::size_t seed) {
    curves[seed] = replay_search(file.space, name, file.budget,
                                 static_cast<std::uint64_t>(args.first_seed) + seed, args.pacing,
                                 file.seeds, file.prior);
  });
  for (std::size_t seed = 0; seed < curves.size(); ++seed) {
    const auto& curve = curves[seed];
    if (!*curve) {
      std::fprintf(stderr, "kiln-lab bench search: %s\n", curve->error().message.c_str());
      return false;
    }
    if (trace.is_open())
      write_trace(trace, file.space, name, static_cast<std::uint64_t>(args.first_seed) + seed,
                  **curve);
    for (std::size_t k = 1; k <= file.budget; ++k)
      st.by_point[k - 1].push_back(fraction_after(**curve, k));
  }
  file.strategies.push_back(std::move(st));
  return true;
}

// One space replayed by every strategy, against configs measured and
// against simulated time, and its wall times. False, having said why, when
// a replay failed.
bool replay_file(FileResult& file, const std::vector<std::string>& strategies,
                 const SearchBenchArgs& args, const std::vector<RecordedSpace>& warm_spaces,
                 std::ofstream& trace) {
  const std::size_t n = file.space.configs.size();
  file.budget = args.max_configs
                    ? std::min(args.max_configs, n)
                    : std::max<std::size_t>(1, static_cast<std::size_t>(args.budget_fraction * n));
  if (!args.warm_from.empty()) {
    file.warm = warm_from_for(file.space, warm_spaces);
    file.seeds = warm_start_seeds(file.warm.records, ProblemKey(file.space.kernel),
                                  recorded_identity(file.space), file.space.space, args.warm_start,
                                  WarmStartDevices::kAny);
    if (args.device_prior)
      file.prior = other_device_prior(file.warm.records, ProblemKey(file.space.kernel),
                                      recorded_identity(file.space), file.space.space);
  }
  for (const auto& name : strategies)
    if (!replay_strategy(file, name, args, trace)) return false;
  auto time = search_time_curves(file.space, strategies, file.budget, args.seeds, args.first_seed,
                                 args.threads, args.pacing, file.warm.records, args.warm_start);
  if (!time) {
    std::fprintf(stderr, "kiln-lab bench search: %s\n", time.error().message.c_str());
    return false;
  }
  file.time = std::move(*time);
  auto wall = search_wall_times(file.space, file.budget, 1, {1, 2, 16});
  if (!wall) {
    std::fprintf(stderr, "kiln-lab bench search: %s\n", wall.error().message.c_str());
    return false;
  }
  file.wall = std::move(*wall);
  return true;
}

// The table's head for one file (without --json).
void print_file_head(const FileResult& file, const SearchBenchArgs& args) {
  const std::size_t n = file.space.configs.size();
  if (file.space.by_time())
    std::printf("%s on %s: %zu configs, optimum %.4g ms, %d seeds\n", file.space.kernel.c_str(),
                file.space.device.c_str(), n, file.space.optimum_ms, args.seeds);
  else
    std::printf(
        "%s on %s: %zu configs, ranked by %s (%s is better), optimum %.4g %s, %d "
        "seeds\n",
        file.space.kernel.c_str(), file.space.device.c_str(), n, file.space.objective.c_str(),
        file.space.higher_is_better ? "higher" : "lower", file.space.optimum,
        file.space.objective.c_str(), args.seeds);
  if (!args.warm_from.empty())
    std::printf(
        "  warm start: %zu seed(s) from %zu other device(s)' file(s), %zu left out; a prior "
        "from %zu device(s)\n",
        file.seeds.size(), file.warm.used.size(), file.warm.left_out.size(),
        file.prior ? file.prior->devices : std::size_t{0});
  std::printf("  %-12s", "strategy");
  for (double share : kShares) std::printf("  %5.1f%% (median [q1,q3])", share * 100);
  std::printf("\n");
}

// One strategy's row: the fractions over seeds at each share of the space
// (printed without --json), as its JSON points.
nlohmann::json strategy_points(const StrategyResult& st, const FileResult& file,
                               const SearchBenchArgs& args) {
  const std::size_t n = file.space.configs.size();
  nlohmann::json points = nlohmann::json::array();
  if (!args.json) std::printf("  %-12s", st.name.c_str());
  for (double share : kShares) {
    const auto k =
        std::max<std::size_t>(1, static_cast<std::size_t>(share * static_cast<double>(n)));
    if (k > file.budget) {
      if (!args.json) std::printf("  %25s", "-");
      continue;
    }
    const auto& v = st.by_point[k - 1];
    const double median = quantile(v, 0.5), q1 = quantile(v, 0.25), q3 = quantile(v, 0.75);
    points.push_back(
        {{"share", share},
         {"configs", k},
         {"median", median},
         // bimodal curves (a seed found the region or not) flip medians
         // by one seed; the mean moves smoothly, for comparing strategies
         {"mean", std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size())},
         {"q1", q1},
         {"q3", q3},
         // the goal's form: a median reaches x when more than half the
         // seeds do, so how far a miss is shows in these shares
         {"reaching_0.90", share_at_least(v, 0.90)},
         {"reaching_0.95", share_at_least(v, 0.95)},
         {"per_seed", v}});
    if (!args.json) std::printf("  %6.3f [%5.3f,%5.3f]     ", median, q1, q3);
  }
  if (!args.json) std::printf("\n");
  return points;
}

// One file's report: printed as a table without --json, returned as JSON.
nlohmann::json report_file(const FileResult& file, const SearchBenchArgs& args) {
  nlohmann::json jf = {{"file", file.space.path.string()},
                       {"kernel", file.space.kernel},
                       {"device", file.space.device},
                       {"configs", file.space.configs.size()},
                       {"objective", file.space.objective},
                       {"higher_is_better", file.space.higher_is_better},
                       {"optimum", file.space.optimum},
                       {"optimum_ms", file.space.optimum_ms},
                       {"budget", file.budget},
                       {"seeds", args.seeds},
                       {"first_seed", args.first_seed}};
  if (!args.warm_from.empty()) {
    nlohmann::json seeds = nlohmann::json::array();
    for (const Config& c : file.seeds) seeds.push_back(c.to_json());
    jf["warm_from"] = file.warm.used;
    jf["warm_from_left_out"] = file.warm.left_out;
    jf["warm_seeds"] = seeds;
    jf["warm_prior_devices"] = file.prior ? file.prior->devices : std::size_t{0};
  }
  if (!args.json) print_file_head(file, args);
  for (const auto& st : file.strategies)
    jf["strategies"][st.name] = strategy_points(st, file, args);
  jf["time_curves"] = file.time.to_json();
  jf["wall_times"] = file.wall.to_json();
  if (!args.json) file.time.print(stdout);
  if (!args.json) file.wall.print(stdout);
  return jf;
}

int run_bench_search(const SearchBenchArgs& args) {
  std::optional<std::vector<std::string>> strategies = distinct_strategies(args);
  if (!strategies) return 2;
  std::vector<RecordedSpace> spaces;
  if (!read_distinct_spaces(args, spaces)) return 2;
  Result<std::vector<RecordedSpace>> warm_spaces = read_warm_from(args.warm_from);
  if (!warm_spaces) {
    std::fprintf(stderr, "kiln-lab bench search: %s\n", warm_spaces.error().message.c_str());
    return 2;
  }
  // The trace and the plot are opened before the run: a path that cannot
  // be written is said before minutes of replays, not after.
  std::ofstream trace, svg;
  if (!open_output(trace, args.trace, "trace") || !open_output(svg, args.plot, "plot")) return 2;
  std::vector<FileResult> results;
  for (RecordedSpace& space : spaces) {
    FileResult file;
    file.space = std::move(space);
    if (!replay_file(file, *strategies, args, *warm_spaces, trace)) return 1;
    results.push_back(std::move(file));
  }
  if (trace.is_open() && !trace.flush()) {
    std::fprintf(stderr, "kiln-lab bench search: writing the trace to %s failed (%s)\n",
                 args.trace.c_str(), std::strerror(errno));
    return 1;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& file : results) out.push_back(report_file(file, args));
  if (args.json) std::cout << out.dump(2) << "\n";
  if (svg.is_open()) {
    svg << plot_svg(results);
    svg.close();
    if (!svg) {
      // The numbers were printed; the run still says it could not plot.
      std::fprintf(stderr, "kiln-lab bench search: writing the plot to %s failed (%s)\n",
                   args.plot.c_str(), std::strerror(errno));
      return 1;
    }
    if (!args.json) std::printf("plot: %s\n", args.plot.c_str());
  }
  return 0;
}

}  // namespace

void add_bench_search_command(CLI::App& bench, int& exit_code) {
  auto a = std::make_shared<SearchBenchArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "search",
      "Search strategies replayed on recorded GPU spaces: best-so-far vs configs measured "
      "and vs simulated time");
  cmd->add_option(
         "--recorded", a->files,
         "Kernel Tuner cache, T4 output or KTT output files (.json, .json.gz, or a .zip of one)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--strategy", a->strategies, "Strategies to compare (default: every one)");
  cmd->add_option("--seeds", a->seeds, "Seeds per strategy and file")
      ->transform(integer_in(1, 10000));
  cmd->add_option("--first-seed", a->first_seed,
                  "The first seed (default 1): a fresh range checks a setting on seeds it was "
                  "not chosen on")
      ->transform(integer_in(1, 1000000000));
  auto* fraction = cmd->add_option("--budget-fraction", a->budget_fraction,
                                   "Budget as a share of each space (default 0.10)")
                       ->check(number_in(0.0001, 1.0));
  cmd->add_option("--max-configs", a->max_configs, "Budget in configs (instead of a share)")
      ->transform(integer_in(1, kMaxConfigs))
      ->excludes(fraction);
  cmd->add_option("--threads", a->threads,
                  "Simulated compile workers of the curves against time (default 2)")
      ->transform(integer_in(1, kMaxThreads));
  auto* in_flight =
      cmd->add_option("--in-flight", a->pacing.in_flight,
                      "Steered searches: proposals kept in flight, one more asked for as each "
                      "result lands (default 3)")
          ->transform(integer_in(1, kMaxConfigs));
  cmd->add_option("--rounds", a->pacing.batch,
                  "Steered searches: propose in rounds of N and wait for each round instead")
      ->transform(integer_in(1, kMaxConfigs))
      ->excludes(in_flight);
  cmd->add_option("--warm-from", a->warm_from,
                  "Other devices' recorded spaces of the kernel, standing in for a shared "
                  "tuning cache: every replay measures first what they found fast (a file of "
                  "the replayed file's own device is left out)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--warm-start", a->warm_start, "Seeds of the --warm-from warm start (default 3)")
      ->transform(integer_in(1, kMaxConfigs))
      ->needs("--warm-from");
  cmd->add_flag("--device-prior", a->device_prior,
                "Research: the --warm-from files' times are also gp's prior for the replays "
                "against configs measured (not a default of the tuner: "
                "docs/lab/priors-journal.md)")
      ->needs("--warm-from");
  cmd->add_flag("--json", a->json, "Print one JSON document");
  // An empty FILE was taken as no --plot (or --trace): nothing was written,
  // and nothing said so.
  const CLI::Validator named(
      [](std::string& path) -> std::string {
        return path.empty()
                   ? "the file name is empty: give a path to write, or leave the option out"
                   : "";
      },
      "FILE");
  cmd->add_option("--plot", a->plot, "Write an SVG of the curves to FILE")->check(named);
  cmd->add_option("--trace", a->trace,
                  "Write every replayed measurement to FILE, one JSON object a line (file, "
                  "strategy, seed, index, config, fraction, best_so_far), in the order measured")
      ->check(named);
  cmd->callback([a, cmd, &exit_code] {
    pacing_needs_steering(*cmd, a->strategies);
    exit_code = run_bench_search(*a);
  });
}

}  // namespace kiln::tool
