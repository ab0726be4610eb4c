#include "search_run.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>

#include "finalists.hpp"
#include "kiln/compile/compile_pool.hpp"
#include "kiln/core/error.hpp"
#include "kiln/search/search.hpp"
#include "kiln/search/search_plan.hpp"
#include "search_memory.hpp"

namespace kiln {

// planned_search: see kiln/tuner/tune_options.hpp. Here because the driver
// resolves "auto" where the space is known.
SearchOptions planned_search(SearchOptions options, const ConfigSpace& space) {
  if (options.strategy != kAutoSearch) return options;
  const SearchPlan plan = plan_search(planning_size(space), options.effort, options.max_configs);
  options.strategy = plan.strategy;
  options.max_configs = plan.max_configs;
  return options;
}

}  // namespace kiln

namespace kiln::internal {

namespace {

using Clock = std::chrono::steady_clock;

// Steered proposals per round where rounds are forced (no overlap, ranks
// sharing the search) and SearchOptions::batch is unset.
constexpr std::size_t kDefaultRound = 4;

// One search in progress: the strategy, the shared rules, and what has
// been measured so far; fed in rounds (next_round, feed_back) or as
// results land (first_in_flight, on_result).
class SearchDriver {
 public:
  SearchDriver(const ProblemKey& problem, PipelineInputs& in, const SearchStrategyInfo& info,
               SearchMemory memory)
      : problem_(problem),
        in_(in),
        def_(in.kernel.tmpl.space.default_config()),
        memory_(std::move(memory), in.kernel, problem, def_) {
    const SearchOptions& opt = in.options.search;
    limit_ = opt.max_configs ? opt.max_configs : info.default_budget;
    measure_default_ = prune_keeps(in.kernel, problem, def_);
    SearchSetup setup;
    setup.space = &in.kernel.tmpl.space;
    setup.listed = in.listed.get();
    setup.max_configs = limit_;
    setup.start = def_;
    setup.default_measured = measure_default_;
    setup.seed = opt.seed;
    search_ = info.make(setup);
    // Proposals in flight need a pipeline that overlaps (a result lands
    // while others compile) and one search per job: ranks sharing a search
    // split each round between them.
    SearchPacing pacing{opt.batch, opt.in_flight};
    if (!pacing.rounds() && (opt.shard_count > 1 || !in.options.pipeline.overlap))
      pacing.batch = kDefaultRound;
    asynchronous_ = search_->steered() && !pacing.rounds();
    round_size_ = !search_->steered() ? std::numeric_limits<std::size_t>::max() : pacing.window();
  }

  bool steered() const { return search_->steered(); }
  // Steered and fed as results land (SearchPacing), not in rounds.
  bool asynchronous() const { return asynchronous_; }
  std::size_t limit() const { return limit_; }
  std::size_t round_size() const { return round_size_; }
  const MemoryRules& memory() const { return memory_; }

  // The next round to measure; empty with `over` set when the search is over.
  std::vector<Config> next_round(bool& over) {
    std::vector<Config> round = propose(round_size_, over);
    // (4) Ranks tuning together each measure their shard of the round (the
    // budget is the job's, not each rank's); the default stays everywhere,
    // as each rank's reference.
    const SearchOptions& opt = in_.options.search;
    if (opt.shard_count > 1) {
      std::vector<Config> mine;
      std::size_t position = 0;  // among the round's configs other than the default
      for (auto& c : round) {
        if (measure_default_ && c == def_)
          mine.push_back(std::move(c));
        else if (position++ % opt.shard_count == opt.shard_index)
          mine.push_back(std::move(c));
      }
      round = std::move(mine);
    }
    return round;
  }

  // Feeds a round's times back in proposal order (the pipeline hands them
  // over in completion order, which differs from run to run); returns the
  // round's measurements in that order.
  std::vector<Measurement> feed_back(const std::vector<Config>& round, PipelineOutput& out) {
    std::map<std::string, const Measurement*> by_config;
    for (const auto& m : out.measurements) by_config[m.config.key()] = &m;
    std::vector<Measurement> ordered;
    for (const auto& c : round) {
      auto it = by_config.find(c.key());
      if (it == by_config.end()) {
        search_->report(c, std::nullopt);
        continue;
      }
      told(it->second->config, *it->second);
      ordered.push_back(*it->second);
    }
    return ordered;
  }

  // Asynchronous: the first configs (the default, the neighbours' winners,
  // the strategy's start and then round_size_ proposals), asked for again
  // while every proposal is pruned; empty when the search has nothing.
  std::vector<Config> first_in_flight() {
    bool over = false;
    std::vector<Config> first;
    while (first.empty() && !over) first = propose(round_size_, over);
    for (const Config& c : first) flight_.push_back(c.key());
    over_ = over;
    return first;
  }

  // Asynchronous (PipelineInputs::refill): one result in, proposals out.
  // Results are told to the search in proposal order, a result that lands
  // early waiting for those proposed before it, and each one told makes
  // room for one more proposal: the walk is the one a search measuring
  // one config at a time with round_size_ in flight takes, whatever order
  // the threads finish in, so a seed repeats it for the same times.
  std::vector<Config> on_result(const Measurement& m, bool stopping) {
    landed_.insert_or_assign(m.config.key(), m);
    std::vector<Config> more;
    while (!flight_.empty()) {
      auto it = landed_.find(flight_.front());
      if (it == landed_.end()) break;  // the oldest proposal is still running
      told(it->second.config, it->second);
      reported_.push_back(flight_.front());
      landed_.erase(it);
      flight_.pop_front();
      while (!stopping && !over_ && flight_.size() < round_size_) {
        for (Config& c : propose(round_size_ - flight_.size(), over_)) {
          flight_.push_back(c.key());
          more.push_back(std::move(c));
        }
      }
    }
    return more;
  }

  // Asynchronous: the run's measurements in the order the search was told
  // of them (its walk), not the order they landed in.
  void in_report_order(std::vector<Measurement>& measurements) const {
    std::map<std::string, std::size_t> rank;
    for (std::size_t i = 0; i < reported_.size(); ++i) rank.emplace(reported_[i], i);
    auto at = [&](const Measurement& m) {
      auto it = rank.find(m.config.key());
      return it == rank.end() ? reported_.size() : it->second;
    };
    std::stable_sort(measurements.begin(), measurements.end(),
                     [&](const Measurement& a, const Measurement& b) { return at(a) < at(b); });
  }

 private:
  // The strategy and the warm start learn a measurement.
  void told(const Config& c, const Measurement& m) {
    const auto seconds = m.ok() ? std::optional<double>(m.stats.median) : std::nullopt;
    search_->report(c, seconds);
    memory_.measured(c, seconds);
  }

  // Up to `size` configs to measure next (more on the first ask: the
  // default, the seeds, the strategy's start), after the shared rules;
  // empty with `over` set when the search is over.
  std::vector<Config> propose(std::size_t size, bool& over) {
    if (limit_ > 0 && measured_ >= limit_) {
      over = true;
      return {};
    }
    const bool first = !asked_;
    asked_ = true;
    const std::size_t want = first ? std::max(size, search_->first_round()) : size;
    // Warm start: neighbours' winners, taken first so that a proposal equal
    // to one is dropped below, not measured twice.
    std::vector<Config> seeds = first ? memory_.take_seeds() : std::vector<Config>();
    // (1) Proposals the early prune keeps; one it rejects is reported as
    // failed and still counts against the strategy's budget.
    std::vector<Config> kept;
    std::size_t proposed = 0;
    while (proposed < want) {
      std::vector<Config> next = search_->next(want - proposed);
      if (next.empty()) break;
      proposed += next.size();
      for (auto& c : next) {
        if (memory_.drop(c, *search_)) continue;  // failed before, or a seed
        if (prune_keeps(in_.kernel, problem_, c))
          kept.push_back(std::move(c));
        else
          search_->report(c, std::nullopt);
      }
    }
    over = proposed == 0;
    // (2) A one-shot round is ranked by the kernel's performance model (a
    // steered search ranks by measuring instead).
    const TunableKernel& k = in_.kernel;
    if (!steered() && k.perf_model && k.top_k > 0) {
      kept = prune_top_k(std::move(kept), problem_, k.perf_model, k.top_k);
    }
    // (3) The default first: it is the reference and the baseline of the
    // speedup and wins ties, so it is always measured, and first, so that
    // its outputs are known early. Then at most max_configs in all.
    std::vector<Config> round;
    if (measure_default_) {
      std::erase(kept, def_);
      if (first) round.push_back(def_);
    }
    for (auto& seed : seeds) round.push_back(std::move(seed));  // right after the default
    round.insert(round.end(), std::make_move_iterator(kept.begin()),
                 std::make_move_iterator(kept.end()));
    if (limit_ > 0 && measured_ + round.size() > limit_) round.resize(limit_ - measured_);
    measured_ += round.size();
    return round;
  }

  const ProblemKey& problem_;
  PipelineInputs& in_;
  const Config def_;
  MemoryRules memory_;
  std::unique_ptr<SearchStrategy> search_;
  std::size_t limit_ = 0;
  std::size_t round_size_ = 0;
  bool measure_default_ = true;
  bool asynchronous_ = false;
  bool asked_ = false;
  std::size_t measured_ = 0;  // configs handed to the pipeline
  // Asynchronous only; configs by Config::key().
  std::deque<std::string> flight_;             // proposed, not told yet, in proposal order
  std::map<std::string, Measurement> landed_;  // results waiting for an older one
  bool over_ = false;                          // the strategy proposes nothing more
  std::vector<std::string> reported_;          // told, in order
};

// The fastest ok median among `measurements` into `best` (0: none yet).
void note_best(double& best, const std::vector<Measurement>& measurements) {
  for (const Measurement& m : measurements) {
    if (m.ok() && m.stats.median > 0 && (best == 0 || m.stats.median < best)) best = m.stats.median;
  }
}

// One pipelined run that the search refills as each result lands; the
// budget and an interruption stop it there (the watchdog).
PipelineOutput run_in_flight(SearchDriver& driver, PipelineInputs& in) {
  std::vector<Config> first = driver.first_in_flight();
  if (first.empty()) return {};
  in.refill = [&driver](const Measurement& m, bool stopping) {
    return driver.on_result(m, stopping);
  };
  PipelineOutput out = run_pipeline(first, in);
  in.refill = nullptr;
  driver.in_report_order(out.measurements);
  note_best(in.best_seconds, out.measurements);
  return out;
}

// Rounds, each one pipelined run, until the search is over, the budget is
// spent or the run is interrupted.
PipelineOutput run_rounds(SearchDriver& driver, PipelineInputs& in, ProgressBar* progress) {
  PipelineOutput total;
  while (true) {
    bool over = false;
    std::vector<Config> round = driver.next_round(over);
    if (round.empty()) {
      if (over) break;
      continue;  // every proposal was pruned: ask again
    }
    // One pipelined run of the round (a spent budget cancels it there, so
    // every proposal is accounted for).
    PipelineOutput out = run_pipeline(round, in);
    std::vector<Measurement> ordered = driver.feed_back(round, out);
    // A steered search keeps proposal order (its walk); one round keeps
    // the pipeline's completion order.
    auto& kept = driver.steered() ? ordered : out.measurements;
    note_best(in.best_seconds, kept);
    total.measurements.insert(total.measurements.end(), kept.begin(), kept.end());
    for (auto& [key, artifact] : out.artifacts) total.artifacts.insert_or_assign(key, artifact);
    total.stats.merge(out.stats);
    if (progress && driver.steered()) {
      progress->compiled(out.stats.compiled);
      progress->benchmarked(out.stats.benchmarked);
      progress->failed(out.stats.failed);
    }
    total.interrupted = total.interrupted || out.interrupted;
    if (over || total.interrupted || Clock::now() >= in.deadline) break;
  }
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

const SearchStrategyInfo& strategy_for(const TuneOptions& options) {
  // "auto" is resolved by drive_search, where the space is known; its
  // strategies are registered ones.
  const SearchStrategyInfo* info = find_search_strategy(
      options.search.strategy == kAutoSearch ? kPlannedModelSearch
                                             : std::string_view(options.search.strategy));
  if (!info) {
    throw Error(ErrorCode::kInvalidArgument, "unknown search strategy '" + options.search.strategy +
                                                 "' (TuneOptions::search.strategy): use one of " +
                                                 search_strategy_names());
  }
  return *info;
}

PipelineOutput drive_search(const ProblemKey& problem, PipelineInputs in, ProgressBar* progress,
                            SearchMemory memory) {
  const auto started = Clock::now();
  in.options.search = planned_search(in.options.search, in.kernel.tmpl.space);
  SearchDriver driver(problem, in, strategy_for(in.options), std::move(memory));
  if (driver.steered()) {
    // NOTES: a round is small, and a benchmark can start only when its unit
    // has compiled: by default a round's configs are spread over the compile
    // threads rather than grouped into one program on one of them.
    PipelineOptions& po = in.options.pipeline;
    if (po.group_size == 0) {
      const auto threads = static_cast<std::size_t>(resolve_workers(po.compile_threads));
      po.group_size = std::max<std::size_t>(1, driver.round_size() / threads);
    }
    if (progress) progress->set_total(driver.limit());
    // Rounds: the pipeline would reset the total to one round's size. One
    // run fed as results land counts against this total itself.
    in.progress = driver.asynchronous() ? progress : nullptr;
  } else {
    in.progress = progress;  // one round: the pipeline counts it
  }
  if (!in.trace) in.trace = std::make_shared<TraceRecorder>();
  const auto trace = in.trace;
  // A real-time search whose finalists are measured again screens: the
  // rounds' repetitions go to the finalists (StopBars::screen). A replay's
  // times are the file's, and its finalists are not measured again.
  in.screen = in.options.measure.early_stop > 0 && in.options.search.finalists >= 2 &&
              in.clock->measures_real_time();

  PipelineOutput total =
      driver.asynchronous() ? run_in_flight(driver, in) : run_rounds(driver, in, progress);
  total.stats.skipped_failed_before = driver.memory().skipped();
  total.skipped = driver.memory().skipped_configs();
  total.forgotten = driver.memory().forgotten();
  total.stats.warm_started = driver.memory().seeds_measured();
  total.cut_short =
      total.interrupted || Clock::now() >= in.deadline ||
      std::any_of(total.measurements.begin(), total.measurements.end(),
                  [](const Measurement& m) { return m.outcome == Outcome::kCancelled; });
  if (in.journal) total.stats.resumed = in.journal->resumed().size();
  if (!total.interrupted) remeasure_finalists(total, in, in.options.search.finalists);
  // Times of the whole search: the rounds share one trace.
  total.stats.compile_seconds = trace->busy_seconds("compile");
  total.stats.benchmark_seconds = trace->busy_seconds("benchmark");
  total.stats.overlap_seconds = trace->overlap_seconds("compile", "benchmark");
  total.stats.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return total;
}

}  // namespace kiln::internal
