// warm_start_seeds and other_device_winners: see kiln/tuner/warm_start.hpp.
#include "kiln/tuner/warm_start.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "search_memory.hpp"

namespace kiln {

std::optional<WarmStartDevices> parse_warm_start_devices(std::string_view text) {
  if (text == "this") return WarmStartDevices::kThis;
  if (text == "any") return WarmStartDevices::kAny;
  return std::nullopt;
}

const char* warm_start_devices_name(WarmStartDevices devices) {
  return devices == WarmStartDevices::kThis ? "this" : "any";
}

namespace {

// One record's order: its winner, then what it measured that ran, fastest
// first, each config once (by key), only configs the space holds.
std::vector<std::string> ranked_keys(const TuningRecord& r, const ConfigSpace& space,
                                     std::map<std::string, Config>& configs) {
  std::vector<const MeasuredConfig*> ran;
  for (const MeasuredConfig& m : r.measured)
    if (m.ok) ran.push_back(&m);
  std::stable_sort(ran.begin(), ran.end(), [](const MeasuredConfig* a, const MeasuredConfig* b) {
    return a->time_ms < b->time_ms;
  });
  std::vector<std::string> order;
  std::unordered_set<std::string> seen;
  auto add = [&](const Config& c) {
    std::string key = c.key();
    if (seen.count(key) || !space.contains(c)) return;
    seen.insert(key);
    order.push_back(key);
    configs.emplace(key, c);
  };
  add(r.best);
  for (const MeasuredConfig* m : ran) add(m->config);
  return order;
}

// Of each other device (arch or name differs from `present.device`), the
// record of `problem`'s kernel and `present.definition` nearest to
// `problem` (problem distance, then the problem's text); by device.
std::vector<const TuningRecord*> other_devices_nearest(const std::vector<TuningRecord>& records,
                                                       const ProblemKey& problem,
                                                       const TuningIdentity& present) {
  struct Nearest {
    double distance;
    std::string problem;
    const TuningRecord* record;
  };
  std::map<std::pair<std::string, std::string>, Nearest> by_device;
  for (const TuningRecord& r : records) {
    if (r.kernel() != problem.kernel() || r.definition != present.definition) continue;
    if (r.device.arch == present.device.arch && r.device.name == present.device.name) continue;
    Nearest n{internal::problem_distance(problem, r.problem), r.problem.canonical(), &r};
    auto [it, fresh] = by_device.try_emplace({r.device.arch, r.device.name}, n);
    if (!fresh &&
        std::pair(n.distance, n.problem) < std::pair(it->second.distance, it->second.problem))
      it->second = n;
  }
  std::vector<const TuningRecord*> out;
  for (const auto& [device, n] : by_device) out.push_back(n.record);
  return out;
}

// What a failure counts above a device's median (as gp's targets count one).
constexpr double kPriorFailure = 0.5;

}  // namespace

std::shared_ptr<const DevicePrior> other_device_prior(const std::vector<TuningRecord>& records,
                                                      const ProblemKey& problem,
                                                      const TuningIdentity& present,
                                                      const ConfigSpace& space) {
  auto prior = std::make_shared<DevicePrior>();
  // Per config: the sum of its scores over the devices that measured it,
  // and how many did; a device that did not counts its median.
  std::unordered_map<std::string, std::pair<double, std::size_t>> sums;
  double medians = 0;
  for (const TuningRecord* r : other_devices_nearest(records, problem, present)) {
    std::vector<std::pair<const Config*, double>> ran;  // log time
    std::vector<const Config*> failed;
    for (const MeasuredConfig& m : r->measured) {
      if (!space.contains(m.config)) continue;
      if (m.ok && m.time_ms > 0 && std::isfinite(m.time_ms))
        ran.emplace_back(&m.config, std::log(m.time_ms));
      else if (!m.ok)
        failed.push_back(&m.config);
    }
    if (ran.size() < 2) continue;  // nothing to rank by
    std::vector<double> logs;
    for (const auto& [c, v] : ran) logs.push_back(v);
    const double fastest = *std::min_element(logs.begin(), logs.end());
    const auto middle = logs.begin() + static_cast<std::ptrdiff_t>(logs.size() / 2);
    std::nth_element(logs.begin(), middle, logs.end());
    const double median = *middle - fastest;
    std::unordered_set<std::string> seen;
    auto add = [&](const Config& c, double score) {
      std::string key = c.key();
      if (!seen.insert(key).second) return;
      auto& [sum, count] = sums[key];
      sum += score - median;  // relative to the device's median, so unmeasured is 0
      ++count;
    };
    for (const auto& [c, v] : ran) add(*c, std::min(v - fastest, median));
    for (const Config* c : failed) add(*c, median + kPriorFailure);
    medians += median;
    ++prior->devices;
  }
  if (prior->devices == 0) return nullptr;
  const auto devices = static_cast<double>(prior->devices);
  for (auto& [key, sc] : sums) prior->score.emplace(key, (sc.first + medians) / devices);
  prior->unknown = medians / devices;
  return prior;
}

std::vector<Config> other_device_winners(const std::vector<TuningRecord>& records,
                                         const ProblemKey& problem, const TuningIdentity& present,
                                         const ConfigSpace& space, std::size_t count) {
  if (count == 0) return {};
  // (1) Each other device's record nearest to this problem.
  const std::vector<const TuningRecord*> nearest = other_devices_nearest(records, problem, present);
  if (nearest.empty()) return {};
  // (2) Mean rank over those records; a config a record did not rank
  // counts as that record's length.
  std::map<std::string, Config> configs;
  std::vector<std::unordered_map<std::string, std::size_t>> ranks;
  for (const TuningRecord* record : nearest) {
    const std::vector<std::string> order = ranked_keys(*record, space, configs);
    auto& rank = ranks.emplace_back();
    for (std::size_t i = 0; i < order.size(); ++i) rank.emplace(order[i], i);
  }
  // (score, key): sorted, lowest score first and ties by the config's text.
  std::vector<std::pair<double, std::string>> scored;
  for (const auto& [key, config] : configs) {
    double sum = 0;
    for (const auto& rank : ranks) {
      const auto at = rank.find(key);
      sum += static_cast<double>(at == rank.end() ? rank.size() : at->second);
    }
    scored.emplace_back(sum / static_cast<double>(ranks.size()), key);
  }
  std::sort(scored.begin(), scored.end());
  // (3) Lowest score first, but a config one parameter away from one
  // already taken waits until the others are taken: seeds that differ in
  // one block width alone tell a search about one region, and a region
  // another device liked may be a poor one here.
  // On recorded convolution spaces, each warm from the others, seeds apart
  // in two parameters or more led a search to the optimum far more often
  // than seeds that were block-width variants of one config (measured:
  // docs/lab/search-spaces-journal.md, "A warm start from other devices",
  // the spread of the seeds).
  auto near_taken = [&](const Config& c, const std::vector<Config>& taken) {
    for (const Config& t : taken) {
      int differ = 0;
      for (const auto& [name, value] : c.values()) differ += !t.has(name) || t.at(name) != value;
      if (differ <= 1) return true;
    }
    return false;
  };
  std::vector<Config> out;
  std::vector<std::string> waiting;
  for (const auto& [s, key] : scored) {
    if (out.size() >= count) break;
    const Config& c = configs.at(key);
    if (near_taken(c, out))
      waiting.push_back(key);
    else
      out.push_back(c);
  }
  for (const std::string& key : waiting) {
    if (out.size() >= count) break;
    out.push_back(configs.at(key));
  }
  return out;
}

std::vector<Config> warm_start_seeds(const std::vector<TuningRecord>& records,
                                     const ProblemKey& problem, const TuningIdentity& present,
                                     const ConfigSpace& space, std::size_t count,
                                     WarmStartDevices devices) {
  std::vector<Config> seeds = internal::neighbour_winners(records, problem, present, space, count);
  if (devices == WarmStartDevices::kThis || seeds.size() >= count) return seeds;
  // Asked for as many as could be left over, so that a config this
  // device's neighbours already gave still leaves room for the next one.
  for (Config& c : other_device_winners(records, problem, present, space, count)) {
    if (seeds.size() >= count) break;
    if (std::find(seeds.begin(), seeds.end(), c) == seeds.end()) seeds.push_back(std::move(c));
  }
  return seeds;
}

}  // namespace kiln
