// choose_one across ranks: decisions this process has not made yet are
// agreed with every rank of the tuner's Collective. Each round every rank
// says what it knows; every rank then computes the decision from the same
// gathered bytes alone, so the decision is identical everywhere without a
// further round trip, and no rank ever waits on one that skipped a round.
#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"
#include "kiln/framework/choose_one.hpp"
#include "tactic_key.hpp"
#include "tactic_profile.hpp"

namespace kiln {
namespace {

using Json = nlohmann::json;

// Every rank's message of one round, parsed. A transport failure (a rank
// gone past its deadline has already ended the job) or bytes that are not
// Kiln's is this call's error: the ranks can no longer agree.
std::vector<Json> gather(Collective& collective, std::string_view op, const Json& mine) {
  auto all = collective.all_gather(mine.dump());
  if (!all.ok()) {
    throw Error(all.error().code,
                "choose_one('" + std::string(op) +
                    "'): the ranks could not exchange their decisions: " + all.error().message);
  }
  std::vector<Json> out;
  for (std::size_t r = 0; r < all->size(); ++r) {
    Json j = Json::parse((*all)[r], nullptr, false);
    if (!j.is_object()) {
      throw Error(ErrorCode::kCorrupt,
                  "choose_one('" + std::string(op) + "'): rank " + std::to_string(r) +
                      " sent bytes that are not a Kiln decision (" +
                      std::to_string((*all)[r].size()) +
                      " bytes); every rank must run the same Kiln and make the same calls");
    }
    out.push_back(std::move(j));
  }
  return out;
}

// The ranks must be deciding the same problem: a rank one call ahead (or
// calling another op) would otherwise be handed a decision for another shape.
void check_same_problem(std::string_view op, const std::vector<Json>& said) {
  const std::string first = said[0].value("problem", std::string());
  for (std::size_t r = 1; r < said.size(); ++r) {
    const std::string mine = said[r].value("problem", std::string());
    if (mine == first) continue;
    throw Error(ErrorCode::kInvalidArgument,
                "choose_one('" + std::string(op) +
                    "'): the ranks decide different problems: rank " + std::to_string(r) + " " +
                    mine + ", rank 0 " + first +
                    "; every rank must make the same choose_one calls, in the same order, "
                    "with the same shapes (or decide alone: no collective)");
  }
}

// The decision the lowest rank that knows one holds, as a Config.
std::optional<Config> first_known(const std::vector<Json>& said) {
  for (const auto& s : said) {
    auto it = s.find("known");
    if (it != s.end() && it->is_object()) return Config::from_json(*it);
  }
  return std::nullopt;
}

// Which (runner, tactic) pairs, by their index in the pass, this rank
// measures.
std::function<bool(std::size_t)> share_of(DistributedStrategy strategy, int rank, int size) {
  switch (strategy) {
    case DistributedStrategy::kParallel:
      return [rank, size](std::size_t i) { return static_cast<int>(i % size) == rank; };
    case DistributedStrategy::kMerge:
      return [](std::size_t) { return true; };
    default:  // broadcast: rank 0 alone
      return [rank](std::size_t) { return rank == 0; };
  }
}

Json measurements_json(const std::vector<Measurement>& measured) {
  Json out = Json::array();
  for (const auto& m : measured) {
    out.push_back({{"runner", m.config.get_int("runner")},
                   {"tactic", m.config.get_int("tactic")},
                   {"ok", m.ok()},
                   {"median_s", m.ok() ? m.stats.median : 0.0},
                   {"reason", m.ok() ? std::string() : m.reason().substr(0, 500)}});
  }
  return out;
}

// Every rank's measurements as one list, ordered by (runner, tactic): a
// pair's time is the median over the ranks that measured it; failed on any
// rank is failed (it could not serve that rank).
std::vector<Measurement> combine(const std::vector<Json>& said) {
  struct Seen {
    std::vector<double> times;
    std::string failed;
  };
  std::map<std::pair<std::int64_t, std::int64_t>, Seen> pairs;
  for (const auto& s : said) {
    for (const auto& m : s.value("measured", Json::array())) {
      Seen& seen = pairs[{m.at("runner").get<std::int64_t>(), m.at("tactic").get<std::int64_t>()}];
      if (m.at("ok").get<bool>()) {
        seen.times.push_back(m.at("median_s").get<double>());
      } else if (seen.failed.empty()) {
        seen.failed = m.value("reason", std::string("failed"));
      }
    }
  }
  std::vector<Measurement> out;
  for (const auto& [pair, seen] : pairs) {
    Measurement m;
    m.config = Config{{"runner", pair.first}, {"tactic", pair.second}};
    if (!seen.failed.empty() || seen.times.empty()) {
      m.outcome = Outcome::kLaunchFailed;
      m.error = make_error(outcome_error_code(m.outcome),
                           seen.failed.empty() ? "measured by no rank" : seen.failed);
    } else {
      m.stats = TimingStats::from_samples({TimingStats::from_samples(seen.times).median});
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

void TacticTuner::set_collective(std::shared_ptr<Collective> collective,
                                 DistributedStrategy strategy) {
  if (collective && strategy == DistributedStrategy::kIndependent) {
    throw Error(ErrorCode::kInvalidArgument,
                "set_collective: strategy independent decides alone; pass no collective for "
                "that, or broadcast, parallel or merge");
  }
  std::lock_guard lock(slow_mutex_);
  options_.collective = std::move(collective);
  options_.strategy = strategy;
  clear_memory();
}

std::optional<TacticTuner::Entry> TacticTuner::agree_known(
    std::string_view op, std::span<TunableRunner* const> runners, const ArgList& inputs,
    const TuningSpec& spec, std::span<const std::int64_t> profile, bool tuning, bool* all_tune) {
  Json mine = {
      {"problem", internal::persisted_problem(op, runners, inputs, spec, profile).canonical()},
      {"tuning", tuning}};
  if (auto e = from_caches(op, runners, inputs, spec, profile)) {
    mine["known"] = internal::decision_config(*runners[e->runner_index], e->tactic).to_json();
  }
  std::vector<Json> said = gather(*options_.collective, op, mine);
  check_same_problem(op, said);
  if (all_tune) {
    *all_tune = std::all_of(said.begin(), said.end(),
                            [](const Json& s) { return s.value("tuning", false); });
  }
  auto known = first_known(said);
  if (!known) return std::nullopt;
  TuningRecord record;
  record.best = *known;
  return internal::entry_from_record(record, runners);
}

Choice TacticTuner::decide_together(std::string_view op, std::span<TunableRunner* const> runners,
                                    const ArgList& inputs, const TuningSpec& spec,
                                    const TacticKey& key, bool tuning) {
  std::vector<std::int64_t> profile = spec.profile_of(inputs);
  bool all_tune = false;
  auto make = [&](const Entry& e, ChoiceSource source) {
    return Choice{runners[e.runner_index], e.runner_index, e.tactic, source};
  };
  if (auto e = agree_known(op, runners, inputs, spec, profile, tuning, &all_tune)) {
    insert(key, *e);
    counters_->disk_hits.fetch_add(1, std::memory_order_relaxed);
    return make(*e, ChoiceSource::kDisk);
  }
  // Tuned only when every rank tunes: a rank outside its tuning scope would
  // otherwise be left out of the rounds the others wait in.
  if (all_tune) {
    tune_profiles_together(op, runners, inputs, spec);
    std::shared_lock read(table_mutex_);
    if (auto it = table_.find(key); it != table_.end())
      return make(it->second, ChoiceSource::kTuned);
  }
  counters_->fallbacks.fetch_add(1, std::memory_order_relaxed);
  Entry fallback{0, kFallbackTactic, true};
  insert(key, fallback);
  return make(fallback, ChoiceSource::kFallback);
}

void TacticTuner::tune_profiles_together(std::string_view op,
                                         std::span<TunableRunner* const> runners,
                                         const ArgList& inputs, const TuningSpec& spec) {
  Collective& collective = *options_.collective;
  using Profile = std::vector<std::int64_t>;
  std::vector<Profile> profiles = spec.dynamic.empty() ? std::vector<Profile>(1) : spec.profiles();
  TuningCache* target = record_target_now();
  std::vector<std::set<int>> prepared(runners.size());
  const auto take = share_of(options_.strategy, collective.rank(), collective.size());
  std::size_t recorded = 0;
  for (const auto& profile : profiles) {
    TacticKey key = internal::key_under(op, runners, inputs, spec, profile);
    // Round 1: a profile any rank knows is every rank's, measured by none.
    if (auto e = agree_known(op, runners, inputs, spec, profile, true, nullptr)) {
      insert(key, *e);
      continue;
    }
    // Round 2: each rank's share measured, everyone's measurements gathered.
    auto measured = measure_profile(op, runners, inputs, spec, profile, prepared, &take);
    Json report = {{"measured", measurements_json(measured.value_or(std::vector<Measurement>{}))}};
    std::vector<Json> reports = gather(collective, op, report);
    std::vector<Measurement> all;
    try {
      all = combine(reports);
    } catch (const Json::exception& e) {
      throw Error(ErrorCode::kCorrupt, "choose_one('" + std::string(op) +
                                           "'): a rank's measurements are malformed: " + e.what());
    }
    recorded += settle_profile(op, runners, inputs, spec, profile, key, all, target);
  }
  save_own(op, recorded, target);
}

}  // namespace kiln
