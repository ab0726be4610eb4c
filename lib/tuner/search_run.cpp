#include "search_run.hpp"

#include <algorithm>
#include <map>

#include "kiln/compile/compile_pool.hpp"
#include "kiln/tuner/search.hpp"

namespace kiln::internal {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kSampledBudget = 64;  // random and annealing, when max_configs is 0
constexpr std::size_t kDefaultRound = 4;    // annealing proposals per round

// `configs` with the default first and at most `limit` (0: no limit) in
// all: the default is the reference and the baseline of the speedup and
// wins ties, so it is always measured, and first, so that its outputs are
// known early.
std::vector<Config> with_default(std::vector<Config> configs, const Config& def,
                                 std::size_t limit) {
  std::erase(configs, def);
  configs.insert(configs.begin(), def);
  if (limit > 0 && configs.size() > limit) configs.resize(limit);
  return configs;
}

// The annealing search: rounds of proposals, each one pipelined run.
PipelineOutput anneal(const ProblemKey& problem, PipelineInputs in, ProgressBar* progress) {
  const auto started = Clock::now();
  const TuneOptions opt = in.options;
  const ConfigSpace& space = in.kernel.tmpl.space;
  const std::size_t limit = opt.max_configs ? opt.max_configs : kSampledBudget;
  const Config def = space.default_config();
  const bool measure_default = prune_keeps(in.kernel, problem, def);

  AnnealingOptions ao = opt.annealing;
  // The default is measured besides the proposals (never proposed: it is
  // the start, or pruned for this problem).
  ao.budget = measure_default ? limit - 1 : limit;
  ao.seed = opt.seed;
  ao.start = def;
  auto search = make_annealing_search(space, ao);
  const std::size_t round_size = opt.search_batch ? opt.search_batch : kDefaultRound;
  // NOTES: a round is small, and a benchmark can start only when its unit
  // has compiled: by default a round's configs are spread over the compile
  // threads rather than grouped into one program on one of them.
  if (opt.group_size == 0) {
    const auto threads = static_cast<std::size_t>(resolve_workers(opt.compile_threads));
    in.options.group_size = std::max<std::size_t>(1, round_size / threads);
  }

  if (progress) progress->set_total(limit);
  in.progress = nullptr;  // the pipeline would reset the total to one round's size
  if (!in.trace) in.trace = std::make_shared<TraceRecorder>();
  const auto trace = in.trace;

  PipelineOutput total;
  bool first = true;
  while (true) {
    // (1) The round: the default and the random start first, then
    // neighbours of the walk's current config. A proposal the early prune
    // rejects is reported as failed; it still counts against the budget.
    std::vector<Config> round;
    if (first && measure_default) round.push_back(def);
    const std::size_t want = first ? std::max(round_size, ao.random_start) : round_size;
    std::size_t proposed = 0;
    while (proposed < want) {
      std::vector<Config> next = search->next(want - proposed);
      if (next.empty()) break;
      proposed += next.size();
      for (auto& c : next) {
        if (prune_keeps(in.kernel, problem, c))
          round.push_back(std::move(c));
        else
          search->report(c, std::nullopt);
      }
    }
    first = false;
    if (round.empty()) {
      if (proposed == 0) break;  // the search is over
      continue;                  // every proposal was pruned: ask again
    }

    // (2) One pipelined run of the round (a spent budget cancels it there,
    // so every proposal is accounted for).
    PipelineOutput out = run_pipeline(round, in);

    // (3) Feed the times back in proposal order: the pipeline hands them
    // over in completion order, which differs from run to run.
    std::map<std::string, const Measurement*> by_config;
    for (const auto& m : out.measurements) by_config[m.config.to_string()] = &m;
    for (const auto& c : round) {
      auto it = by_config.find(c.to_string());
      if (it == by_config.end()) {
        search->report(c, std::nullopt);
        continue;
      }
      const Measurement& m = *it->second;
      search->report(c, m.ok() ? std::optional<double>(m.stats.median) : std::nullopt);
      total.measurements.push_back(m);
    }
    for (auto& [key, artifact] : out.artifacts) total.artifacts.insert_or_assign(key, artifact);
    total.stats.merge(out.stats);
    if (progress) {
      progress->compiled(out.stats.compiled);
      progress->benchmarked(out.stats.benchmarked);
      progress->failed(out.stats.failed);
    }
    if (proposed == 0 || Clock::now() >= in.deadline) break;
  }
  // Times of the whole search: the rounds share one trace.
  total.stats.compile_seconds = trace->busy_seconds("compile");
  total.stats.benchmark_seconds = trace->busy_seconds("benchmark");
  total.stats.overlap_seconds = trace->overlap_seconds("compile", "benchmark");
  total.stats.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return total;
}

}  // namespace

bool prune_keeps(const TunableKernel& kernel, const ProblemKey& problem, const Config& config) {
  return !kernel.early_prune || kernel.early_prune(config, problem);
}

Config heuristic_config(const TunableKernel& kernel, const ProblemKey& problem) {
  const ConfigSpace& space = kernel.tmpl.space;
  Config def = space.default_config();
  if (prune_keeps(kernel, problem, def)) return def;
  auto kept = space.first_where([&](const Config& c) { return prune_keeps(kernel, problem, c); },
                                ConfigSpace::kDefaultScanLimit);
  return kept ? *kept : def;
}

std::vector<Config> candidate_configs(const TunableKernel& kernel, const ProblemKey& problem,
                                      const TuneOptions& opt) {
  const ConfigSpace& space = kernel.tmpl.space;
  std::vector<Config> configs;
  std::size_t limit = opt.max_configs;
  if (opt.search == SearchKind::kExhaustive) {
    configs = space.enumerate();
  } else {
    if (limit == 0) limit = kSampledBudget;
    configs = make_random_search(space, limit, opt.seed)->next(limit);
  }
  configs = prune_early(std::move(configs), problem, kernel.early_prune);
  if (kernel.perf_model && kernel.top_k > 0) {
    configs = prune_top_k(std::move(configs), problem, kernel.perf_model, kernel.top_k);
  }
  const Config def = space.default_config();
  if (!prune_keeps(kernel, problem, def)) {
    if (limit > 0 && configs.size() > limit) configs.resize(limit);
    return configs;
  }
  return with_default(std::move(configs), def, limit);
}

PipelineOutput run_search(const ProblemKey& problem, PipelineInputs inputs, ProgressBar* progress) {
  if (inputs.options.search == SearchKind::kAnnealing) {
    return anneal(problem, std::move(inputs), progress);
  }
  std::vector<Config> configs = candidate_configs(inputs.kernel, problem, inputs.options);
  if (progress) progress->set_total(configs.size());
  inputs.progress = progress;
  return run_pipeline(configs, std::move(inputs));
}

}  // namespace kiln::internal
