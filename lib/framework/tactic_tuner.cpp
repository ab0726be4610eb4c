// choose_one's decision path: the per-thread snapshot of this process's
// table (hot path), then under one lock the caches, a tuning pass, or the
// fallback.
#include <algorithm>
#include <array>

#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"
#include "kiln/framework/capture.hpp"
#include "kiln/framework/choose_one.hpp"
#include "kiln/tuner/device_identity.hpp"
#include "tactic_key.hpp"
#include "tactic_profile.hpp"
#include "thread_context.hpp"

namespace kiln {

const char* choice_source_name(ChoiceSource source) {
  switch (source) {
    case ChoiceSource::kMemory:
      return "memory";
    case ChoiceSource::kDisk:
      return "disk";
    case ChoiceSource::kTuned:
      return "tuned";
    case ChoiceSource::kFallback:
      return "fallback";
    case ChoiceSource::kSkipped:
      return "skipped";
    case ChoiceSource::kReplay:
      return "replay";
  }
  return "?";
}

namespace {

std::atomic<std::uint64_t> g_next_serial{1};

// A thread's copy of one tuner's table, refreshed when the tuner's
// generation moves. Reads then need no lock and no shared write, which is
// what keeps a hit within a small constant of a bare hash-map probe.
struct Snapshot {
  std::uint64_t serial = 0;
  std::uint64_t generation = 0;
  std::unordered_map<TacticKey, TacticTuner::Entry, TacticKeyHash> table;
};
thread_local std::vector<Snapshot> t_snapshots;

}  // namespace

TacticTuner::TacticTuner(TacticTunerOptions options)
    : options_(std::move(options)), counters_(std::make_unique<Counters>()) {
  if (options_.identity) {
    identity_.device = *options_.identity;
  } else if (options_.device) {
    identity_.device = device_identity(*options_.device);  // as the Autotuner tags records
  } else {
    identity_.device = DeviceIdentity{"host", "host CPU", 0, 0};
  }
  identity_.toolchain = options_.toolchain ? *options_.toolchain : ToolchainFingerprint::of("", "");
  identity_.env = CacheEnvRegistry::global().snapshot();
  tuning_allowed_ = Options::global().tuning;
  serial_ = g_next_serial.fetch_add(1);
}

TacticTuner::~TacticTuner() = default;

TacticTuner& default_tactic_tuner() {
  static TacticTuner tuner;
  return tuner;
}

const std::unordered_map<TacticKey, TacticTuner::Entry, TacticKeyHash>& TacticTuner::snapshot() {
  std::uint64_t generation = generation_.load(std::memory_order_acquire);
  Snapshot* mine = nullptr;
  for (auto& s : t_snapshots) {
    if (s.serial == serial_) mine = &s;
  }
  if (!mine) {
    // A thread that used many tuners keeps the newest few.
    if (t_snapshots.size() >= 8) t_snapshots.erase(t_snapshots.begin());
    mine = &t_snapshots.emplace_back();
    mine->serial = serial_;
  }
  if (mine->generation != generation) {
    std::shared_lock lock(table_mutex_);
    mine->table = table_;
    mine->generation = generation_.load(std::memory_order_relaxed);
  }
  return mine->table;
}

void TacticTuner::insert(const TacticKey& key, Entry entry) {
  std::unique_lock lock(table_mutex_);
  table_[key] = entry;
  generation_.fetch_add(1, std::memory_order_release);
}

Choice TacticTuner::choose_one(std::string_view op, std::span<TunableRunner* const> runners,
                               const ArgList& inputs, const TuningSpec& spec) {
  if (runners.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "choose_one('" + std::string(op) +
                    "'): no runners; give at least one (its tactic -1 is the fallback)");
  }
  if (!spec.finalized() && (!spec.dynamic.empty() || !spec.constraints.empty())) {
    throw Error(ErrorCode::kInvalidArgument,
                "choose_one('" + std::string(op) +
                    "'): the tuning spec has dynamic dims but was not finalized; call "
                    "spec.finalize() once after building it");
  }
  internal::ThreadContext& ctx = internal::thread_context();
  // Skipped: nothing listed, compiled, profiled, captured or cached.
  if (!ctx.skip.empty() && ctx.skip.find(op) != ctx.skip.end()) {
    counters_->skipped.fetch_add(1, std::memory_order_relaxed);
    return Choice{runners[0], 0, kFallbackTactic, ChoiceSource::kSkipped};
  }
  std::array<std::int64_t, internal::kMaxDynamicDims> buffer{};
  std::span<std::int64_t> profile(buffer.data(), spec.dynamic.size());
  spec.profile_into(inputs, profile);
  TacticKey key = internal::key_under(op, runners, inputs, spec, profile);
  if (ctx.replay) return ctx.replay->next(op, runners, key);

  bool tuning = ctx.tuning.value_or(false) && tuning_allowed_;
  const auto& table = snapshot();
  auto it = table.find(key);
  Choice choice;
  if (it != table.end() && !(it->second.fallback && tuning)) {
    const Entry& e = it->second;
    choice = Choice{runners[e.runner_index], e.runner_index, e.tactic,
                    e.fallback ? ChoiceSource::kFallback : ChoiceSource::kMemory};
  } else {
    choice = decide_slow(op, runners, inputs, spec, key, tuning);
  }
  if (ctx.capture) ctx.capture->record(op, runners, inputs, key, choice);
  return choice;
}

Choice TacticTuner::decide_slow(std::string_view op, std::span<TunableRunner* const> runners,
                                const ArgList& inputs, const TuningSpec& spec, const TacticKey& key,
                                bool tuning) {
  std::lock_guard lock(slow_mutex_);
  auto from_table = [&]() -> std::optional<Entry> {
    std::shared_lock read(table_mutex_);
    auto it = table_.find(key);
    if (it == table_.end() || (it->second.fallback && tuning)) return std::nullopt;
    return it->second;
  };
  auto make = [&](const Entry& e, ChoiceSource source) {
    return Choice{runners[e.runner_index], e.runner_index, e.tactic, source};
  };
  // Another thread may have decided while this one waited.
  if (auto e = from_table()) {
    return make(*e, e->fallback ? ChoiceSource::kFallback : ChoiceSource::kMemory);
  }
  if (options_.collective && options_.strategy != DistributedStrategy::kIndependent) {
    return decide_together(op, runners, inputs, spec, key, tuning);
  }
  std::vector<std::int64_t> profile = spec.profile_of(inputs);
  if (auto e = from_caches(op, runners, inputs, spec, profile)) {
    insert(key, *e);
    counters_->disk_hits.fetch_add(1, std::memory_order_relaxed);
    return make(*e, ChoiceSource::kDisk);
  }
  if (tuning) {
    tune_profiles(op, runners, inputs, spec);
    if (auto e = from_table()) return make(*e, ChoiceSource::kTuned);
  }
  counters_->fallbacks.fetch_add(1, std::memory_order_relaxed);
  std::string shape;
  for (std::int64_t b : profile) shape += (shape.empty() ? "" : ",") + std::to_string(b);
  log_once(LogLevel::kWarn, "kiln-tactic-miss:" + std::string(op),
           std::string(op) + ": no tuned tactic for this shape (profile [" + shape +
               "]); running the fallback, tactic -1 of '" + runners[0]->id().text() +
               "'. Tune inside a kiln::TuningScope or ship a tuning file (warned once per op).");
  Entry fallback{0, kFallbackTactic, true};
  insert(key, fallback);
  return make(fallback, ChoiceSource::kFallback);
}

std::optional<TacticTuner::Entry> TacticTuner::from_caches(std::string_view op,
                                                           std::span<TunableRunner* const> runners,
                                                           const ArgList& inputs,
                                                           const TuningSpec& spec,
                                                           std::span<const std::int64_t> profile) {
  // This thread's scope first, then the other attached caches, newest first.
  std::vector<TuningCache*> order;
  TuningCache* mine = internal::thread_context().cache;
  if (mine && std::find(caches_.begin(), caches_.end(), mine) != caches_.end())
    order.push_back(mine);
  for (auto it = caches_.rbegin(); it != caches_.rend(); ++it)
    if (*it != mine) order.push_back(*it);
  if (options_.cache) order.push_back(options_.cache);
  if (order.empty()) return std::nullopt;
  ProblemKey problem = internal::persisted_problem(op, runners, inputs, spec, profile);
  for (TuningCache* cache : order) {
    auto record = cache->lookup(problem, identity_);
    if (!record) continue;
    auto entry = internal::entry_from_record(*record, runners);
    if (entry) return entry;
    counters_->stale.fetch_add(1, std::memory_order_relaxed);
    log_once(LogLevel::kWarn, "kiln-tactic-stale:" + problem.canonical(),
             std::string(op) + ": the cached decision {" + record->best.to_string() +
                 "} names a runner or tactic these runners no longer have; not used");
  }
  return std::nullopt;
}

void TacticTuner::attach(TuningCache* cache) {
  if (!cache) return;
  std::lock_guard lock(slow_mutex_);
  caches_.push_back(cache);
  // Fallback decisions were misses; the new cache may hold them.
  std::unique_lock write(table_mutex_);
  std::erase_if(table_, [](const auto& kv) { return kv.second.fallback; });
  generation_.fetch_add(1, std::memory_order_release);
}

void TacticTuner::detach(TuningCache* cache) {
  std::lock_guard lock(slow_mutex_);
  std::erase(caches_, cache);
}

void TacticTuner::clear_memory() {
  std::unique_lock write(table_mutex_);
  table_.clear();
  generation_.fetch_add(1, std::memory_order_release);
}

std::size_t TacticTuner::memory_size() const {
  std::shared_lock read(table_mutex_);
  return table_.size();
}

TacticStats TacticTuner::stats() const {
  TacticStats s;
  s.disk_hits = counters_->disk_hits.load();
  s.tuned_profiles = counters_->tuned_profiles.load();
  s.profiled = counters_->profiled.load();
  s.failed = counters_->failed.load();
  s.fallbacks = counters_->fallbacks.load();
  s.skipped = counters_->skipped.load();
  s.stale = counters_->stale.load();
  return s;
}

TacticKey TacticTuner::key_of(std::string_view op, std::span<TunableRunner* const> runners,
                              const ArgList& inputs, const TuningSpec& spec) {
  std::array<std::int64_t, internal::kMaxDynamicDims> buffer{};
  std::span<std::int64_t> profile(buffer.data(), spec.dynamic.size());
  spec.profile_into(inputs, profile);
  return internal::key_under(op, runners, inputs, spec, profile);
}

}  // namespace kiln
