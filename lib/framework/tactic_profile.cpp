// The tuning pass: for every profile of the spec not yet decided, generate
// inputs of that shape, prepare each runner once (untimed), time every
// (runner, tactic), pick the winner deterministically, remember it and
// record it in the calling thread's tuning scope's cache (or the tuner's own).
#include "tactic_profile.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"
#include "read_outputs.hpp"
#include "tactic_key.hpp"
#include "thread_context.hpp"

namespace kiln {
namespace internal {

Measurement time_tactic(TunableRunner& runner, const ArgList& inputs, int tactic,
                        const TacticTunerOptions& options) {
  using Clock = std::chrono::steady_clock;
  Measurement m;
  auto once = [&]() {
    Status st = runner.run(inputs, tactic);
    if (st.ok()) st = runner.synchronize();
    return st;
  };
  auto fail = [&](const std::string& reason) {
    m.outcome = Outcome::kLaunchFailed;
    m.error = make_error(outcome_error_code(m.outcome), reason);
    return m;
  };
  try {
    for (int i = 0; i < options.warmup; ++i) {
      Status st = once();
      if (!st.ok()) return fail(st.error().describe());
    }
    std::vector<double> samples;
    double total = 0;
    int max_reps = std::max(options.max_reps, std::max(options.min_reps, 1));
    while (static_cast<int>(samples.size()) < max_reps) {
      auto t0 = Clock::now();
      Status st = once();
      double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (!st.ok()) return fail(st.error().describe());
      samples.push_back(s);
      total += s;
      if (static_cast<int>(samples.size()) >= options.min_reps && total >= options.target_seconds)
        break;
    }
    m.stats = TimingStats::from_samples(std::move(samples));
  } catch (const std::exception& e) {
    return fail(std::string("threw: ") + e.what());
  }
  return m;
}

Config decision_config(const TunableRunner& runner, int tactic) {
  return Config{{"runner", runner.id().text()},
                {"tactic", std::int64_t{tactic}},
                {"tactic_name", runner.describe(tactic)}};
}

std::optional<TacticTuner::Entry> entry_from_record(const TuningRecord& record,
                                                    std::span<TunableRunner* const> runners) {
  const Config& best = record.best;
  if (!best.has("runner") || !best.has("tactic")) return std::nullopt;
  try {
    const std::string& id = best.get_string("runner");
    int tactic = static_cast<int>(best.get_int("tactic"));
    for (std::size_t i = 0; i < runners.size(); ++i) {
      if (runners[i]->id().text() != id) continue;
      if (best.has("tactic_name") && best.get_string("tactic_name") != runners[i]->describe(tactic))
        return std::nullopt;
      return TacticTuner::Entry{static_cast<std::uint32_t>(i), tactic, false};
    }
  } catch (const Error&) {
    // A record of another shape (hand-edited, another tool): not ours.
  }
  return std::nullopt;
}

}  // namespace internal

namespace {

using Outputs = std::vector<std::vector<double>>;
using Profile = std::vector<std::int64_t>;

// NOTES: the calling thread's scope, not the newest attached cache: two
// threads each in its own scope would otherwise both write to whichever
// file was opened last.
TuningCache* record_target(TuningCache* own, const std::vector<TuningCache*>& caches) {
  TuningCache* mine = internal::thread_context().cache;
  if (mine && std::find(caches.begin(), caches.end(), mine) != caches.end()) return mine;
  return own;
}

// What the first runner's fallback writes: the reference of the check.
std::optional<Outputs> reference_outputs(std::string_view name, TunableRunner& runner,
                                         const ArgList& args, const TacticTunerOptions& options) {
  if (options.check_outputs.empty()) return std::nullopt;
  Status st = runner.run(args, kFallbackTactic);
  if (st.ok()) st = runner.synchronize();
  auto out = st.ok() ? internal::read_outputs(args, options.check_outputs, options.device)
                     : Result<Outputs>(st.error());
  if (!out.ok()) {
    KILN_LOG(kWarn) << name << ": the reference (fallback of '" << runner.id().text()
                    << "') did not run, so outputs are not checked: " << out.error().message;
    return std::nullopt;
  }
  return std::move(*out);
}

void check_against(const Outputs& want, const ArgList& args, const TacticTunerOptions& options,
                   Measurement& m) {
  auto got = internal::read_outputs(args, options.check_outputs, options.device);
  if (!got.ok()) {
    m.outcome = Outcome::kWrongResult;
    m.error =
        make_error(outcome_error_code(m.outcome), "outputs not readable: " + got.error().message);
    return;
  }
  for (std::size_t o = 0; o < want.size(); ++o) {
    Comparison c = compare((*got)[o], want[o], options.tolerance);
    if (c.ok) continue;
    m.outcome = Outcome::kWrongResult;
    m.error = make_error(outcome_error_code(m.outcome),
                         "output '" + options.check_outputs[o] + "': " + c.describe());
    return;
  }
}

// The runner's tactics for `args`; the fallback alone when it lists none
// or throws.
std::vector<int> list_tactics(std::string_view op, TunableRunner& runner, const ArgList& args) {
  std::vector<int> tactics;
  try {
    tactics = runner.tactics(args);
  } catch (const std::exception& e) {
    KILN_LOG(kWarn) << op << ": runner '" << runner.id().text()
                    << "' failed to list tactics: " << e.what();
  }
  if (tactics.empty()) tactics.push_back(kFallbackTactic);
  return tactics;
}

// Prepares the tactics not yet prepared in this pass (untimed); why it
// failed, or empty.
std::string prepare_fresh(TunableRunner& runner, const ArgList& args,
                          const std::vector<int>& tactics, std::set<int>& prepared) {
  std::vector<int> fresh;
  for (int t : tactics) {
    if (prepared.insert(t).second) fresh.push_back(t);
  }
  if (fresh.empty()) return {};
  Status st = ok_status();
  try {
    st = runner.prepare(args, fresh);
  } catch (const std::exception& e) {
    st = make_error(ErrorCode::kInternal, e.what());
  }
  return st.ok() ? std::string() : st.error().describe();
}

// One profile's inputs and what the tactics are measured with.
struct ProfileRun {
  std::string_view op;
  const ArgList& args;
  const std::optional<Outputs>& reference;
  const TacticTunerOptions& options;
  std::atomic<std::uint64_t>& profiled;
  std::atomic<std::uint64_t>& failed;
};

// The tactics of runner `r` timed (and checked) on the profile's inputs:
// those `take` accepts by their index in the pass (`index` counts on).
void measure_runner(const ProfileRun& run, TunableRunner& runner, std::size_t r,
                    std::set<int>& prepared, std::vector<Measurement>& measured,
                    const std::function<bool(std::size_t)>* take, std::size_t& index) {
  std::vector<int> tactics = list_tactics(run.op, runner, run.args);
  std::vector<int> mine;
  for (int t : tactics)
    if (!take || (*take)(index++)) mine.push_back(t);
  if (mine.empty()) return;
  std::string unprepared = prepare_fresh(runner, run.args, mine, prepared);
  for (int t : mine) {
    Measurement m;
    if (!unprepared.empty()) {
      m.outcome = Outcome::kCompileFailed;
      m.error = make_error(outcome_error_code(m.outcome), "prepare failed: " + unprepared);
    } else {
      m = internal::time_tactic(runner, run.args, t, run.options);
      // The last timed run left its outputs in place.
      if (m.ok() && run.reference) check_against(*run.reference, run.args, run.options, m);
    }
    m.config = Config{{"runner", static_cast<std::int64_t>(r)}, {"tactic", std::int64_t{t}}};
    run.profiled.fetch_add(1, std::memory_order_relaxed);
    if (!m.ok()) run.failed.fetch_add(1, std::memory_order_relaxed);
    measured.push_back(std::move(m));
  }
}

void warn_nothing_ran(std::string_view op, const std::vector<Measurement>& measured) {
  std::string reasons;
  for (const auto& m : measured)
    reasons += "\n  {" + m.config.to_string() + "}: " + m.reason().substr(0, 300);
  KILN_LOG(kWarn) << op << ": no (runner, tactic) ran; using the fallback" << reasons;
}

// The persisted decision of one profile, with every (runner, tactic)
// measured under its persisted name.
TuningRecord profile_record(std::string_view op, std::span<TunableRunner* const> runners,
                            const ArgList& inputs, const TuningSpec& spec, const Profile& profile,
                            const TuningIdentity& identity, const TacticTuner::Entry& entry,
                            const Measurement& best, const std::vector<Measurement>& measured) {
  TuningRecord record;
  record.problem = internal::persisted_problem(op, runners, inputs, spec, profile);
  record.definition = identity.definition;
  record.device = identity.device;
  record.toolchain = identity.toolchain;
  record.env = identity.env;
  record.best = internal::decision_config(*runners[entry.runner_index], entry.tactic);
  record.best_time_ms = best.stats.median * 1e3;
  for (const auto& m : measured) {
    const TunableRunner& runner = *runners[m.config.get_int("runner")];
    int t = static_cast<int>(m.config.get_int("tactic"));
    record.measured.push_back(MeasuredConfig{internal::decision_config(runner, t),
                                             m.ok() ? m.stats.median * 1e3 : 0, m.ok(),
                                             m.reason().substr(0, 500)});
  }
  return record;
}

}  // namespace

std::optional<std::vector<Measurement>> TacticTuner::measure_profile(
    std::string_view op, std::span<TunableRunner* const> runners, const ArgList& inputs,
    const TuningSpec& spec, std::span<const std::int64_t> profile,
    std::vector<std::set<int>>& prepared, const std::function<bool(std::size_t)>* take) {
  auto generated =
      make_profile_inputs(inputs, spec, Profile(profile.begin(), profile.end()), options_.device);
  if (!generated.ok()) {
    KILN_LOG(kWarn) << op << ": cannot generate tuning inputs, profile not tuned: "
                    << generated.error().describe();
    return std::nullopt;
  }
  const ArgList& args = generated->args;
  auto reference = reference_outputs(op, *runners[0], args, options_);
  ProfileRun run{op, args, reference, options_, counters_->profiled, counters_->failed};
  std::vector<Measurement> measured;
  std::size_t index = 0;
  for (std::size_t r = 0; r < runners.size(); ++r) {
    measure_runner(run, *runners[r], r, prepared[r], measured, take, index);
  }
  return measured;
}

bool TacticTuner::settle_profile(std::string_view op, std::span<TunableRunner* const> runners,
                                 const ArgList& inputs, const TuningSpec& spec,
                                 std::span<const std::int64_t> profile, const TacticKey& key,
                                 const std::vector<Measurement>& measured, TuningCache* target) {
  counters_->tuned_profiles.fetch_add(1, std::memory_order_relaxed);
  auto chosen = select_winner(measured, options_.selection);
  if (!chosen) {
    warn_nothing_ran(op, measured);
    insert(key, Entry{0, kFallbackTactic, false});
    return false;
  }
  const Measurement& best = measured[chosen->winner];
  Entry entry{static_cast<std::uint32_t>(best.config.get_int("runner")),
              static_cast<int>(best.config.get_int("tactic")), false};
  insert(key, entry);
  if (!target) return false;
  target->put(profile_record(op, runners, inputs, spec, Profile(profile.begin(), profile.end()),
                             identity_, entry, best, measured));
  return true;
}

void TacticTuner::tune_profiles(std::string_view op, std::span<TunableRunner* const> runners,
                                const ArgList& inputs, const TuningSpec& spec) {
  std::vector<Profile> profiles = spec.dynamic.empty() ? std::vector<Profile>(1) : spec.profiles();
  TuningCache* target = record_target(options_.cache, caches_);
  // Per runner, the tactics already prepared in this pass.
  std::vector<std::set<int>> prepared(runners.size());
  std::size_t recorded = 0;
  for (const auto& profile : profiles) {
    TacticKey key = internal::key_under(op, runners, inputs, spec, profile);
    {
      std::shared_lock read(table_mutex_);
      auto it = table_.find(key);
      if (it != table_.end() && !it->second.fallback) continue;
    }
    if (auto e = from_caches(op, runners, inputs, spec, profile)) {
      insert(key, *e);
      continue;
    }
    auto measured = measure_profile(op, runners, inputs, spec, profile, prepared, nullptr);
    if (!measured) continue;
    recorded += settle_profile(op, runners, inputs, spec, profile, key, *measured, target);
  }
  save_own(op, recorded, target);
}

void TacticTuner::save_own(std::string_view op, std::size_t recorded, TuningCache* target) {
  // A scope's file is saved when the scope ends; the tuner's own cache now.
  if (recorded > 0 && target && target == options_.cache) {
    auto saved = options_.cache->save();
    if (!saved.ok())
      KILN_LOG(kWarn) << op << ": tuning decisions not saved: " << saved.error().describe();
  }
}

TuningCache* TacticTuner::record_target_now() const {
  return record_target(options_.cache, caches_);
}

}  // namespace kiln
