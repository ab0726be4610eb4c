// Shared by the search strategies: the sampler of the random and model-based
// searches, and each strategy's registry entry (listed in search_registry.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "kiln/core/config_space.hpp"
#include "kiln/search/search.hpp"

namespace kiln::internal {

// Draws valid configs uniformly by odometer index, never the same one twice.
// With `listed` (SearchSetup::listed, borrowed), a draw that rejection
// cannot fill (a sparse space) comes from the untaken listed configs.
class UniqueSampler {
 public:
  UniqueSampler(ConfigSpace space, std::uint64_t seed, const std::vector<Config>* listed = nullptr);
  const ConfigSpace& space() const { return space_; }
  std::optional<Config> draw();
  // Records `config` as taken; false when it already was.
  bool mark(const Config& config);
  // Whether `config` was drawn or marked already.
  bool taken(const Config& config) const;
  // The same by the config's place in the cartesian product (index()): a
  // strategy that asks of the same configs at every pick computes it once.
  bool taken_at(std::uint64_t index) const { return tried_.count(index) > 0; }
  std::uint64_t index(const Config& config) const { return index_of(config); }
  std::mt19937_64& rng() { return rng_; }
  // Rejection has failed and draws come from the listed configs: a
  // strategy that draws candidates by index itself should list them too.
  bool sparse() const { return sparse_; }
  const std::vector<Config>* listed() const { return listed_; }
  // index() of the listed config at `i`, the whole list's computed on the
  // first call: a strategy drawing thousands of listed candidates a pick
  // then looks up no parameter by name.
  std::uint64_t listed_index(std::size_t i);

 private:
  ConfigSpace space_;
  std::uint64_t index_of(const Config& config) const;
  std::optional<Config> draw_listed();
  std::mt19937_64 rng_;
  std::uint64_t size_;
  std::unordered_set<std::uint64_t> tried_;
  const std::vector<Config>* listed_;
  std::vector<std::uint64_t> listed_index_;  // index_of each listed config, once needed
  bool sparse_ = false;                      // rejection failed once: draw from the list
};

// Configs one parameter away from `config` (any other value of one
// parameter, in parameter then value order) that the sampler's space holds
// and the sampler has not taken.
std::vector<Config> untaken_neighbours(const UniqueSampler& sampler, const Config& config);

// The frame of a steered strategy: proposals stop at the budget, the
// strategy's own proposals come first (after a random first round of
// `first_round` configs) and random configs fill what it leaves. The
// default config the driver measures is marked taken.
class BudgetedSearch : public SearchStrategy {
 public:
  BudgetedSearch(const SearchSetup& setup, std::size_t first_round);
  bool steered() const override { return true; }
  std::size_t first_round() const override { return first_round_; }
  std::vector<Config> next(std::size_t max_batch) final;

 protected:
  // Up to `n` configs to measure now, each new and marked in sampler();
  // called once the first round is proposed. Fewer (none) is fine.
  virtual std::vector<Config> propose(std::size_t n) = 0;
  UniqueSampler& sampler() { return sampler_; }
  const UniqueSampler& sampler() const { return sampler_; }
  std::size_t budget() const { return budget_; }
  std::size_t proposed() const { return proposed_; }

 private:
  UniqueSampler sampler_;
  std::size_t budget_;
  std::size_t first_round_;
  std::size_t proposed_ = 0;
};

// A steered strategy left no proposal of its own: max_configs 1 and the
// driver measuring the default. It proposes nothing (a budget of 0 would
// read as no limit to the strategy it stands for).
class SpentSearch final : public SearchStrategy {
 public:
  explicit SpentSearch(std::string name) : name_(std::move(name)) {}
  const char* name() const override { return name_.c_str(); }
  bool steered() const override { return true; }
  std::vector<Config> next(std::size_t) override { return {}; }
  void report(const Config&, std::optional<double>) override {}

 private:
  std::string name_;
};

// The budget a strategy proposes within: max_configs less the default the
// driver measures itself; nullopt when that leaves nothing to propose.
inline std::optional<std::size_t> proposal_budget(const SearchSetup& setup) {
  if (!setup.default_measured || setup.max_configs == 0) return setup.max_configs;
  if (setup.max_configs == 1) return std::nullopt;
  return setup.max_configs - 1;
}

// The registry entry of a steered strategy S(const SearchSetup&) whose
// budget leaves out the default config the driver measures itself.
template <class S>
SearchStrategyInfo steered_strategy(std::string name, std::string description,
                                    std::size_t default_budget) {
  return {name, std::move(description), default_budget,
          [name](const SearchSetup& setup) -> std::unique_ptr<SearchStrategy> {
            const std::optional<std::size_t> budget = proposal_budget(setup);
            if (!budget) return std::make_unique<SpentSearch>(name);
            SearchSetup s = setup;
            s.max_configs = *budget;
            return std::make_unique<S>(s);
          }};
}

SearchStrategyInfo exhaustive_strategy();
SearchStrategyInfo random_strategy();
SearchStrategyInfo hybrid_strategy();
// hybrid's soft prior (search_hybrid.cpp, "Priors bias, never confine"):
// the share of each batch taken from outside what its parts prefer, and
// the plateau, a share of the budget measured with no better time, at
// which that share doubles. The product runs hybrid_knobs(); tests (and
// the lab's replays) make hybrid with others.
struct HybridKnobs {
  double outside_share = 0;  // from the first proposal; 0: none, and no plateau watch
  double plateau_share = 0;  // of the planned budget
};
HybridKnobs hybrid_knobs();
std::unique_ptr<SearchStrategy> make_hybrid_search(const SearchSetup& setup, HybridKnobs knobs);
// hybrid's parts (search_hybrid.cpp), not registered: bayes's forest
// proposes its opening, gp's Gaussian process the rest. Their entries make
// them alone, as hybrid and the tests do.
SearchStrategyInfo bayes_strategy();
SearchStrategyInfo gp_strategy();

// A bounded model's measurements, of `n` in report order: the `best` first
// of `eligible` by `faster`, then the `recent` latest not chosen, then
// `spread` of the rest evenly over the run. gp's and bayes's models past
// their bounds (search_gp.cpp, GpSearch::rebase(), says why): where
// expected improvement is decided, where the search is now, and the regions
// measured slow or failing early, which stay known.
template <class Faster>
std::vector<std::size_t> bounded_rows(std::size_t n, std::vector<std::size_t> eligible,
                                      Faster faster, std::size_t best, std::size_t spread,
                                      std::size_t recent) {
  best = std::min(best, eligible.size());
  std::partial_sort(eligible.begin(), eligible.begin() + static_cast<std::ptrdiff_t>(best),
                    eligible.end(), faster);
  std::vector<bool> chosen(n, false);
  for (std::size_t k = 0; k < best; ++k) chosen[eligible[k]] = true;
  for (std::size_t i = n, k = 0; i-- > 0 && k < recent;)
    if (!chosen[i]) chosen[i] = true, ++k;
  std::vector<std::size_t> rest, rows;
  for (std::size_t i = 0; i < n; ++i)
    if (!chosen[i]) rest.push_back(i);
  for (std::size_t k = 0, m = std::min(spread, rest.size()); k < m; ++k)
    chosen[rest[k * rest.size() / m]] = true;
  for (std::size_t i = 0; i < n; ++i)
    if (chosen[i]) rows.push_back(i);
  return rows;
}

// bounded_rows over `y` (lower is faster, ties to the earlier): the rows
// bayes's forest is fitted on past its bound.
inline std::vector<std::size_t> bounded_rows_of(const std::vector<double>& y, std::size_t best,
                                                std::size_t spread, std::size_t recent) {
  std::vector<std::size_t> every(y.size());
  for (std::size_t i = 0; i < every.size(); ++i) every[i] = i;
  return bounded_rows(
      y.size(), std::move(every),
      [&](std::size_t a, std::size_t b) { return y[a] != y[b] ? y[a] < y[b] : a < b; }, best,
      spread, recent);
}

// Where gp's model stops conditioning on every measured config
// (search_gp.cpp, GpSearch::rebase(), says why): past `from` measured, on a
// base of the `best` fastest, `spread` others and the `recent` latest,
// rebased once `epoch` more were measured, its candidates `candidates`
// configs fixed for the epoch. A space too large to keep every config's
// values (more than `pool` cartesian configs, or a pool too large to keep
// for the budget) takes its candidates in epochs from the start, drawn
// afresh (`drawn` of them) every `renew` measurements before the bound.
// Tests make them small.
struct GpBounds {
  std::size_t from = 2048;
  std::size_t best = 512, spread = 256, recent = 256;
  std::size_t epoch = 512;
  std::size_t candidates = 4096;
  std::uint64_t pool = 500'000;
  std::size_t drawn = 8192, renew = 8;
};

// gp (search_gp.cpp) of `random_start` random configs before its first fit,
// for a strategy that hands it measurements of its own (hybrid). `setup`
// as a registry entry's make() takes it. `alignment_codes` false: integer
// parameters without the power-of-two codes (search_gp.cpp's RowEncoder),
// for a space whose blocks a prior has aligned already (hybrid's whole
// warps).
std::unique_ptr<SearchStrategy> make_gp_search(const SearchSetup& setup, std::size_t random_start,
                                               GpBounds bounds = {}, bool alignment_codes = true);
// The measured rows gp's model conditions on now; 0 for another strategy.
std::size_t gp_model_rows(const SearchStrategy& gp);

}  // namespace kiln::internal
