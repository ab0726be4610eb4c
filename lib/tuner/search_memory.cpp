#include "search_memory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "kiln/tuner/failure_evidence.hpp"
#include "search_run.hpp"

namespace kiln::internal {

namespace {

// What one argument only one problem has (or has in another dtype or
// rank) costs: more than any plausible difference of sizes, so such a
// problem ranks after every problem of the same argument layout.
constexpr double kMismatch = 8;

double log_gap(std::int64_t a, std::int64_t b) {
  // Extents of 0 or below (an empty tensor, a negative scalar) are compared
  // as 1: distance is about tiles, and those have none.
  const double x = static_cast<double>(std::max<std::int64_t>(a, 1));
  const double y = static_cast<double>(std::max<std::int64_t>(b, 1));
  return std::abs(std::log2(x) - std::log2(y));
}

// Adds over the keys both maps have `same(a, b)`, and kMismatch for each key
// only one has.
template <class Map, class Same>
double over_both(const Map& a, const Map& b, Same same) {
  double d = 0;
  for (const auto& [name, x] : a) {
    auto it = b.find(name);
    d += it == b.end() ? kMismatch : same(x, it->second);
  }
  for (const auto& [name, y] : b) {
    if (a.find(name) == a.end()) d += kMismatch;
  }
  return d;
}

}  // namespace

double problem_distance(const ProblemKey& a, const ProblemKey& b) {
  double d = over_both(a.tensors(), b.tensors(), [](const ArgSignature& x, const ArgSignature& y) {
    if (x.dtype != y.dtype || x.shape.size() != y.shape.size()) return kMismatch;
    double s = 0;
    for (std::size_t i = 0; i < x.shape.size(); ++i) s += log_gap(x.shape[i], y.shape[i]);
    return s;
  });
  d += over_both(a.scalars(), b.scalars(), [](const Value& x, const Value& y) {
    if (x.index() != y.index()) return kMismatch;
    if (const auto* i = std::get_if<std::int64_t>(&x))
      return log_gap(*i, std::get<std::int64_t>(y));
    return x == y ? 0.0 : 1.0;  // flags and words: the same or not
  });
  return d;
}

std::vector<const TuningRecord*> nearest_records(const std::vector<TuningRecord>& records,
                                                 const ProblemKey& problem,
                                                 const TuningIdentity& present,
                                                 const ConfigSpace& space) {
  const DeviceIdentity& device = present.device;
  struct Near {
    double distance;
    std::string problem;
    const TuningRecord* record;
  };
  std::vector<Near> near;
  for (const auto& r : records) {
    if (r.kernel() != problem.kernel() || r.definition != present.definition) continue;
    // Other devices' winners come after these (other_device_winners): a
    // neighbour measured here is the better evidence.
    if (r.device.arch != device.arch || r.device.name != device.name) continue;
    if (!space.contains(r.best)) continue;  // a space that changed since
    near.push_back({problem_distance(problem, r.problem), r.problem.canonical(), &r});
  }
  std::sort(near.begin(), near.end(), [](const Near& x, const Near& y) {
    return x.distance != y.distance ? x.distance < y.distance : x.problem < y.problem;
  });
  std::vector<const TuningRecord*> out;
  for (const auto& n : near) out.push_back(n.record);
  return out;
}

std::vector<Config> neighbour_winners(const std::vector<TuningRecord>& records,
                                      const ProblemKey& problem, const TuningIdentity& present,
                                      const ConfigSpace& space, std::size_t count) {
  std::vector<Config> out;
  for (const TuningRecord* r : nearest_records(records, problem, present, space)) {
    if (out.size() >= count) break;
    if (std::find(out.begin(), out.end(), r->best) == out.end()) out.push_back(r->best);
  }
  return out;
}

bool remembered_outcome(Outcome outcome) {
  switch (outcome) {
    case Outcome::kCompileFailed:
    case Outcome::kLoadFailed:
    case Outcome::kLaunchFailed:
    case Outcome::kWrongResult:
    case Outcome::kTimeout:
    case Outcome::kCrashed:
      return true;
    default:
      return false;
  }
}

std::vector<FailedConfig> failures_to_remember(const std::vector<Measurement>& measurements,
                                               const std::vector<std::string>& include_dirs,
                                               const std::filesystem::path& cwd) {
  std::vector<FailedConfig> out;
  const std::int64_t now = unix_now();
  for (const auto& m : measurements) {
    // NOTES: a config the budget cut short is kCancelled, not kTimeout:
    // only a compile or benchmark past its own deadline is the config's.
    if (!remembered_outcome(m.outcome)) continue;
    // A benchmark hook's failure (measure.hpp, RunHooks) is the user's
    // callable's, not the config's: the next run measures it again.
    if (m.error.details.count("hook")) continue;
    const std::string why = m.reason();
    // The message and the compiler's log first: the other details (the
    // options, the search list) would fill the 500 characters kept.
    const auto log = m.error.details.find("log");
    const std::string gist =
        log == m.error.details.end() ? why : m.error.message + "\n" + log->second;
    FailedConfig f{m.config, outcome_name(m.outcome), gist.substr(0, 500)};
    f.failed_at = now;
    if (m.outcome == Outcome::kCompileFailed) {
      // The compiler's own list of where it looked, when it gives one
      // (Clang's header search, NVRTC's); else the unit's -I directories
      // and the working directory.
      auto search = m.error.details.find("include_search");
      if (search != m.error.details.end()) {
        std::vector<std::string> dirs;
        std::istringstream lines(search->second);
        for (std::string line; std::getline(lines, line);)
          if (!line.empty()) dirs.push_back(line);
        add_compile_evidence(f, why, dirs, {});
      } else {
        add_compile_evidence(f, why, include_dirs, cwd);
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

FailureUpdate failure_update(const std::vector<Measurement>& measurements,
                             std::vector<FailedConfig> failed, const SearchMemory& memory,
                             const std::vector<FailedConfig>& skipped, bool retune) {
  FailureUpdate u;
  u.failed = std::move(failed);
  u.replace = retune;
  for (const auto& m : measurements) {
    // Pruned and cancelled configs never ran: they say nothing of a
    // remembered failure.
    if (m.outcome != Outcome::kPruned && m.outcome != Outcome::kCancelled)
      u.measured.push_back(m.config);
  }
  for (const auto& f : skipped) u.skipped.push_back(f.config);
  for (const auto& f : memory.forgotten) u.forgotten.push_back(f.failure.config);
  return u;
}

void recall_failures(SearchMemory& memory, const FailedConfigs& failures, const FailureKey& key,
                     bool retune, std::int64_t now) {
  if (retune) return;
  for (auto& f : failures.recall(key)) {
    if (auto why = failure_gone(f, now)) {
      memory.forgotten.push_back({std::move(f), std::move(*why)});
    } else {
      std::string text = f.config.key();
      memory.failed_before.emplace(std::move(text), std::move(f));
    }
  }
}

SearchMemory recall_seeds(const std::vector<TuningRecord>& records, const ProblemKey& problem,
                          const TuningIdentity& present, const ConfigSpace& space,
                          std::size_t warm_start, WarmStartDevices devices) {
  SearchMemory memory;
  memory.seeds = warm_start_seeds(records, problem, present, space, 2 * warm_start + 1, devices);
  memory.max_seeds = warm_start;
  return memory;
}

SearchMemory recall_memory(const TuningCache* tunings, const FailedConfigs& failures,
                           const FailureKey& key, const ConfigSpace& space, std::size_t warm_start,
                           WarmStartDevices devices, bool retune) {
  SearchMemory memory;
  if (tunings && warm_start > 0)
    memory =
        recall_seeds(tunings->records(), key.problem, key.identity, space, warm_start, devices);
  recall_failures(memory, failures, key, retune, unix_now());
  return memory;
}

MemoryRules::MemoryRules(SearchMemory memory, const TunableKernel& kernel,
                         const ProblemKey& problem, const Config& def)
    : memory_(std::move(memory)) {
  for (auto& s : memory_.seeds) {
    if (seeds_.size() >= memory_.max_seeds) break;
    const std::string text = s.key();
    if (s == def || memory_.failed_before.count(text) || seed_texts_.count(text)) continue;
    if (!prune_keeps(kernel, problem, s)) continue;
    seed_texts_.insert(text);
    seeds_.push_back(std::move(s));
  }
  memory_.seeds.clear();
  // The default is measured whatever happened to it before: it is the
  // baseline of the speedup and, by default, the reference.
  memory_.failed_before.erase(def.key());
}

std::vector<Config> MemoryRules::take_seeds() {
  if (seeds_taken_) return {};
  seeds_taken_ = true;
  return seeds_;
}

bool MemoryRules::drop(const Config& proposal, SearchStrategy& strategy) {
  const std::string text = proposal.key();
  if (auto failed = memory_.failed_before.find(text); failed != memory_.failed_before.end()) {
    strategy.report(proposal, std::nullopt);
    ++skipped_;
    if (skipped_texts_.insert(text).second) skipped_configs_.push_back(failed->second);
    return true;
  }
  if (!seeds_taken_ || !seed_texts_.count(text)) return false;
  auto known = seed_results_.find(text);
  if (known != seed_results_.end()) strategy.report(proposal, known->second);
  return true;
}

void MemoryRules::measured(const Config& config, std::optional<double> seconds) {
  const std::string text = config.key();
  if (seed_texts_.count(text)) seed_results_[text] = seconds;
}

}  // namespace kiln::internal
