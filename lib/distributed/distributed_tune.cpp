// tune_distributed: the four strategies over a Collective. Every rank ends
// with the same gathered bytes and computes the decision from them alone,
// so the decision is identical everywhere without a further round trip.
#include "kiln/distributed/distributed_tune.hpp"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

namespace kiln {

namespace {

// What one rank says after tuning its part: its decision's record (when it
// has one), every config it measured, or why it failed.
nlohmann::json rank_report(const Result<TuneResult>& result) {
  // "now": the decision's creation time, taken from the first report so
  // that every rank stamps the identical record.
  nlohmann::json j = {{"ok", result.ok()}, {"now", utc_timestamp()}};
  if (!result) {
    j["error"] = result.error().message;
    return j;
  }
  j["served"] = result->source == ResultSource::kMemory || result->source == ResultSource::kDisk;
  j["record"] = result->record ? result->record->to_json() : nlohmann::json();
  nlohmann::json measured = nlohmann::json::array();
  for (const auto& m : result->measurements) {
    // Pruned (another rank's shard, the model, the budget) or cancelled:
    // not measured here, so no evidence about the config.
    if (m.outcome == Outcome::kPruned || m.outcome == Outcome::kCancelled) continue;
    measured.push_back({{"config", m.config.to_json()},
                        {"ok", m.ok()},
                        {"median_ms", m.ok() ? m.stats.median * 1e3 : 0.0},
                        {"reason", m.ok() ? std::string() : m.reason().substr(0, 500)}});
    if (m.compile_seconds > 0) measured.back()["compile_ms"] = m.compile_share_seconds() * 1e3;
    if (m.benchmark_seconds > 0) measured.back()["benchmark_ms"] = m.benchmark_seconds * 1e3;
  }
  j["measured"] = measured;
  return j;
}

// A rank's report as sent: a JSON object whose "measured", when present,
// is a list. Anything else (a rank of another Kiln, bytes of another
// collective) is named, never thrown from the parser.
Result<nlohmann::json> parse_report(const std::string& text, std::size_t rank) {
  nlohmann::json report = nlohmann::json::parse(text, nullptr, false);
  if (report.is_object() && (!report.contains("measured") || report["measured"].is_array()))
    return report;
  return make_error(ErrorCode::kCorrupt,
                    "rank " + std::to_string(rank) + "'s report is malformed (" +
                        std::to_string(text.size()) + " bytes: \"" + text.substr(0, 80) +
                        "\"); every rank must run the same Kiln");
}

// The first failed rank's error, naming it; ok when every rank succeeded.
Status check_ranks(const std::vector<nlohmann::json>& reports) {
  std::string failed;
  for (std::size_t r = 0; r < reports.size(); ++r) {
    if (reports[r].value("ok", false)) continue;
    failed += (failed.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) +
              " failed: " + reports[r].value("error", std::string("no report"));
  }
  if (failed.empty()) return ok_status();
  return make_error(ErrorCode::kInternal, failed + " (every rank stops: the ranks must agree)");
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Each config's time over the ranks that measured it: the median of their
// medians; failed on any rank = failed (it cannot serve that rank).
std::vector<MeasuredConfig> combine(const std::vector<nlohmann::json>& reports) {
  std::map<std::string, std::vector<const nlohmann::json*>> by_config;
  for (const auto& report : reports)
    for (const auto& m : report["measured"]) by_config[m["config"].dump()].push_back(&m);
  std::vector<MeasuredConfig> out;  // ordered by the config's JSON: the same on every rank
  for (const auto& [text, all] : by_config) {
    MeasuredConfig mc;
    mc.config = Config::from_json(nlohmann::json::parse(text));
    std::vector<double> times, compile_ms, benchmark_ms;
    for (const auto* m : all) {
      if (m->contains("compile_ms") && (*m)["compile_ms"].is_number())
        compile_ms.push_back((*m)["compile_ms"].get<double>());
      if (m->contains("benchmark_ms") && (*m)["benchmark_ms"].is_number())
        benchmark_ms.push_back((*m)["benchmark_ms"].get<double>());
      if ((*m)["ok"].get<bool>()) {
        times.push_back((*m)["median_ms"].get<double>());
      } else if (mc.ok) {
        mc.ok = false;
        mc.reason = (*m)["reason"].get<std::string>();
      }
    }
    if (mc.ok && !times.empty()) mc.time_ms = median_of(times);
    // Costs likewise: the median over the ranks that paid them.
    if (!compile_ms.empty()) mc.compile_ms = median_of(compile_ms);
    if (!benchmark_ms.empty()) mc.benchmark_ms = median_of(benchmark_ms);
    out.push_back(std::move(mc));
  }
  return out;
}

// Every rank's problem text against the first rank's that has one (an
// empty text is a rank that could not say: its own tuning will fail and be
// named): the first that differs is named with both texts.
Status check_problems_agree(const std::vector<std::string>& problems) {
  std::size_t first = 0;
  while (first < problems.size() && problems[first].empty()) ++first;
  for (std::size_t r = first + 1; r < problems.size(); ++r) {
    if (problems[r].empty() || problems[r] == problems[first]) continue;
    return make_error(ErrorCode::kInvalidArgument,
                      "the ranks do not tune one problem: rank " + std::to_string(r) + " tunes " +
                          problems[r] + ", rank " + std::to_string(first) + " tunes " +
                          problems[first] +
                          "; give every rank the same kernel, space and shape, or use "
                          "--distributed independent");
  }
  return ok_status();
}

// Ranks whose records describe different problems (kernel, shape, the
// kernel's definition) cannot share one decision: merging their times would
// hand a rank a config measured on another problem, or one outside its own
// space. Names the first rank that differs from rank 0's and both problems.
Status check_one_problem(const std::vector<nlohmann::json>& reports) {
  nlohmann::json first;  // the first record's problem and definition
  std::size_t first_rank = 0;
  for (std::size_t r = 0; r < reports.size(); ++r) {
    const auto record = reports[r].find("record");
    if (record == reports[r].end() || !record->is_object()) continue;
    nlohmann::json mine = {{"problem", record->value("problem", nlohmann::json())},
                           {"definition", record->value("definition", std::string())}};
    if (first.is_null()) {
      first = std::move(mine);
      first_rank = r;
    } else if (mine != first) {
      return make_error(ErrorCode::kInvalidArgument,
                        "rank " + std::to_string(r) + " tuned another problem than rank " +
                            std::to_string(first_rank) + ": " + mine.dump() + " against " +
                            first.dump() +
                            "; give every rank the same kernel, space and shape, or use "
                            "--distributed independent");
    }
  }
  return ok_status();
}

// The decision from every rank's report: a record served from a cache when
// some rank had one (the lowest such rank's), else the combined winner
// written into the lowest rank's record.
Result<TuningRecord> decide(const std::vector<nlohmann::json>& reports, bool* served) {
  if (Status one = check_one_problem(reports); !one.ok()) return one.error();
  for (const auto& report : reports) {
    if (report.value("served", false) && report["record"].is_object()) {
      *served = true;
      TuningRecord record = TuningRecord::from_json(report["record"]);
      if (record.created.empty()) record.created = reports[0].value("now", std::string());
      return record;
    }
  }
  const nlohmann::json* shape = nullptr;
  for (const auto& report : reports)
    if (report["record"].is_object() && !shape) shape = &report["record"];
  if (!shape)
    return make_error(ErrorCode::kNotFound,
                      "no rank found a config that works: every config failed on some rank");
  TuningRecord record = TuningRecord::from_json(*shape);
  record.measured = combine(reports);
  const MeasuredConfig* best = nullptr;
  for (const auto& m : record.measured) {
    if (!m.ok) continue;
    // Lower time wins; equal times go to the config whose text sorts first.
    if (!best || m.time_ms < best->time_ms ||
        (m.time_ms == best->time_ms && m.config.to_string() < best->config.to_string()))
      best = &m;
  }
  if (!best)
    return make_error(ErrorCode::kNotFound,
                      "every config failed on some rank; no decision can serve every rank");
  record.best = best->config;
  record.best_time_ms = best->time_ms;
  record.created = reports[0].value("now", std::string());
  return record;
}

// Every rank tunes alone and saves its own decision.
Result<DistributedOutcome> tune_independent(Collective& collective, const TuneOptions& mine,
                                            const RankTune& tune) {
  DistributedOutcome outcome;
  Result<TuneResult> result = tune(mine);
  if (!result) return result.error();
  if (!result->record)
    return make_error(ErrorCode::kNotFound,
                      "rank " + std::to_string(collective.rank()) + " found no config");
  outcome.record = *result->record;
  for (const auto& m : result->measurements)
    if (m.outcome != Outcome::kPruned && m.outcome != Outcome::kCancelled) ++outcome.benchmarked;
  outcome.saved = result->saved;
  outcome.not_saved_reason = result->not_saved_reason;
  outcome.collective_seconds = collective.seconds_in_collectives();
  return outcome;
}

// Rank 0 tunes and every rank receives its report.
Status broadcast_report(Collective& collective, const TuneOptions& mine, const RankTune& tune,
                        std::vector<nlohmann::json>& reports, DistributedOutcome& outcome) {
  std::string report;
  if (collective.rank() == 0) report = rank_report(tune(mine)).dump();
  Result<std::string> root = collective.broadcast(report, 0);
  if (!root) return root.error();
  Result<nlohmann::json> report0 = parse_report(*root, 0);
  if (!report0) return report0.error();
  reports.push_back(std::move(*report0));
  outcome.benchmarked_by_rank.assign(collective.size(), 0);
  outcome.benchmarked_by_rank[0] = reports[0].value("measured", nlohmann::json::array()).size();
  return ok_status();
}

// Every rank tunes (its shard of the space, when parallel) and every rank
// receives every report.
Status gather_reports(Collective& collective, DistributedStrategy strategy, TuneOptions& mine,
                      const RankTune& tune, std::vector<nlohmann::json>& reports,
                      DistributedOutcome& outcome) {
  if (strategy == DistributedStrategy::kParallel) {
    mine.search.shard_index = static_cast<std::uint32_t>(collective.rank());
    mine.search.shard_count = static_cast<std::uint32_t>(collective.size());
  }
  Result<std::vector<std::string>> all = collective.all_gather(rank_report(tune(mine)).dump());
  if (!all) return all.error();
  for (std::size_t r = 0; r < all->size(); ++r) {
    Result<nlohmann::json> report = parse_report((*all)[r], r);
    if (!report) return report.error();
    reports.push_back(std::move(*report));
    outcome.benchmarked_by_rank.push_back(
        reports.back().value("measured", nlohmann::json::array()).size());
  }
  return ok_status();
}

// decide(), with a malformed report (a JSON type error) as an error value.
Result<TuningRecord> decide_checked(const std::vector<nlohmann::json>& reports, bool* served) {
  try {
    return decide(reports, served);
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kCorrupt,
                      std::string("a rank's report is malformed: ") + e.what());
  }
}

// The decision saved, the same on every rank; why not, when it is not.
void save_decision(TuningCache& cache, DistributedOutcome& outcome) {
  cache.put(outcome.record, TuningCache::PutMode::kReplace);
  Result<StoreOutcome> saved = cache.save();
  if (!saved) {
    outcome.not_saved_reason = saved.error().message;
  } else if (*saved != StoreOutcome::kWritten) {
    std::string why;
    cache.writable(&why);
    outcome.not_saved_reason = why;
  } else {
    outcome.saved = true;
  }
}

// The record the lowest rank that holds one has, on every rank; nullopt
// when no rank holds one.
Result<std::optional<TuningRecord>> known_anywhere(Collective& collective,
                                                   const RankLookup& lookup) {
  std::optional<TuningRecord> mine = lookup();
  Result<std::vector<std::string>> all =
      collective.all_gather(mine ? mine->to_json().dump() : std::string());
  if (!all) return all.error();
  for (std::size_t r = 0; r < all->size(); ++r) {
    if ((*all)[r].empty()) continue;
    try {
      return std::optional<TuningRecord>(TuningRecord::from_json(nlohmann::json::parse((*all)[r])));
    } catch (const std::exception& e) {
      return make_error(ErrorCode::kCorrupt,
                        "rank " + std::to_string(r) + "'s cached record is malformed: " + e.what());
    }
  }
  return std::optional<TuningRecord>();
}

}  // namespace

Result<DistributedOutcome> tune_distributed(Collective& collective, DistributedStrategy strategy,
                                            const TuneOptions& options, TuningCache& cache,
                                            const RankTune& tune, std::string_view problem,
                                            const RankLookup& lookup) {
  DistributedOutcome outcome;
  TuneOptions mine = options;
  const int rank = collective.rank();

  if (strategy == DistributedStrategy::kIndependent) {
    return tune_independent(collective, mine, tune);
  }

  // Before anything is measured: every rank names its problem, and ranks
  // that differ stop together (broadcast would otherwise hand rank 0's
  // decision to a rank that never tuned, for a problem it does not have).
  // Every rank gathers, an empty text too: a collective that some ranks
  // skip would pair with the next one of the others.
  Result<std::vector<std::string>> problems = collective.all_gather(std::string(problem));
  if (!problems) return problems.error();
  if (Status same = check_problems_agree(*problems); !same.ok()) return same.error();
  if (lookup) {
    Result<std::optional<TuningRecord>> known = known_anywhere(collective, lookup);
    if (!known) return known.error();
    if (*known) {
      outcome.record = std::move(**known);
      outcome.served = true;
      outcome.benchmarked_by_rank.assign(static_cast<std::size_t>(collective.size()), 0);
      save_decision(cache, outcome);
      outcome.collective_seconds = collective.seconds_in_collectives();
      return outcome;
    }
  }

  // Every other strategy: nobody saves its own partial view; the decision
  // made from everyone's reports is saved below, the same on every rank.
  mine.cache.save = false;
  std::vector<nlohmann::json> reports;
  Status gathered = strategy == DistributedStrategy::kBroadcast
                        ? broadcast_report(collective, mine, tune, reports, outcome)
                        : gather_reports(collective, strategy, mine, tune, reports, outcome);
  if (!gathered.ok()) return gathered.error();
  outcome.benchmarked = strategy == DistributedStrategy::kBroadcast
                            ? (rank == 0 ? outcome.benchmarked_by_rank[0] : 0)
                            : outcome.benchmarked_by_rank[rank];
  if (Status ranks = check_ranks(reports); !ranks.ok()) return ranks.error();
  Result<TuningRecord> decided = decide_checked(reports, &outcome.served);
  if (!decided) return decided.error();
  outcome.record = std::move(*decided);
  save_decision(cache, outcome);
  outcome.collective_seconds = collective.seconds_in_collectives();
  return outcome;
}

}  // namespace kiln
