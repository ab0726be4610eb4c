// Differential evolution over the parameters' list positions: a random
// population, then for each member a trial made from the fastest member and
// two others (best + F * (b - c), rounded and clamped per parameter) crossed with the
// member (each parameter taken from the trial with probability CR, at least
// one always); the trial replaces the member when faster. A trial outside
// the space or measured before is replaced by a random config, so every
// proposal is new. Failed configs never enter the population.
#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <random>
#include <string>

#include "kiln/tuner/search.hpp"
#include "search_internal.hpp"

namespace kiln {
namespace {

class EvolutionSearch final : public internal::BudgetedSearch {
 public:
  explicit EvolutionSearch(const SearchSetup& setup)
      : BudgetedSearch(setup, population_for(setup.max_configs)),
        population_size_(population_for(setup.max_configs)) {}
  const char* name() const override { return "evolution"; }

  std::vector<Config> propose(std::size_t n) override {
    std::vector<Config> batch;
    // A trial that falls outside the space or on a measured config leaves
    // its place to a random one (BudgetedSearch fills it).
    for (std::size_t i = 0; i < n && population_.size() >= 4; ++i)
      if (std::optional<Config> c = trial()) batch.push_back(std::move(*c));
    return batch;
  }

  void report(const Config& config, std::optional<double> seconds) override {
    if (!seconds) return;
    auto parent = parents_.find(config.key());
    if (parent != parents_.end()) {
      const std::size_t i = parent->second;
      parents_.erase(parent);
      if (i < population_.size() && *seconds < population_[i].second) {
        population_[i] = {config, *seconds};
        return;
      }
    }
    if (population_.size() < population_size_) population_.push_back({config, *seconds});
  }

 private:
  std::size_t index_of(const Parameter& p, const Config& c) const {
    return static_cast<std::size_t>(std::find(p.values.begin(), p.values.end(), c.at(p.name)) -
                                    p.values.begin());
  }

  // The next member's trial, or nullopt when it falls outside the space or
  // was measured before (the caller then draws a random config).
  std::optional<Config> trial() {
    std::mt19937_64& rng = sampler().rng();
    const std::size_t n = population_.size();
    const std::size_t target = next_member_++ % n;
    std::uniform_int_distribution<std::size_t> pick(0, n - 1);
    // DE/best/1: the trial starts from the fastest member, moved by the
    // difference of two others (on few distinct values a random base wanders).
    std::size_t a = 0;
    for (std::size_t i = 1; i < n; ++i)
      if (population_[i].second < population_[a].second) a = i;
    std::size_t b, c;
    do b = pick(rng);
    while (b == a);
    do c = pick(rng);
    while (c == a || c == b);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const auto& params = sampler().space().parameters();
    std::uniform_int_distribution<std::size_t> forced(0, params.size() - 1);
    const std::size_t always = forced(rng);
    Config out = population_[target].first;
    for (std::size_t k = 0; k < params.size(); ++k) {
      const Parameter& p = params[k];
      if (k != always && u(rng) >= kCrossover) continue;
      const double v = static_cast<double>(index_of(p, population_[a].first)) +
                       kWeight * (static_cast<double>(index_of(p, population_[b].first)) -
                                  static_cast<double>(index_of(p, population_[c].first)));
      long j = std::lround(v);
      // The forced parameter always moves: a zero difference would otherwise
      // re-propose the base config, which is measured already.
      if (k == always && j == static_cast<long>(index_of(p, out)))
        j += std::uniform_int_distribution<int>(0, 1)(rng) ? 1 : -1;
      j = std::clamp(j, 0L, static_cast<long>(p.values.size()) - 1);
      out.set(p.name, p.values[static_cast<std::size_t>(j)]);
    }
    if (!sampler().space().contains(out) || !sampler().mark(out)) return std::nullopt;
    parents_[out.key()] = target;
    return out;
  }

  static constexpr double kWeight = 0.8;     // F
  static constexpr double kCrossover = 0.7;  // CR
  static std::size_t population_for(std::size_t budget) {
    return std::clamp<std::size_t>(budget ? budget / 10 : 12, 6, 12);
  }
  std::size_t population_size_;
  std::size_t next_member_ = 0;
  std::vector<std::pair<Config, double>> population_;
  std::map<std::string, std::size_t> parents_;  // a trial's text -> the member it challenges
};

}  // namespace

namespace internal {

SearchStrategyInfo evolution_strategy() {
  return steered_strategy<EvolutionSearch>(
      "evolution",
      "differential evolution over the parameters' list positions, steered by the times "
      "(rounds)",
      64);
}

}  // namespace internal
}  // namespace kiln
