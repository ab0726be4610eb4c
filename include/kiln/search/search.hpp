// Search strategies: which configs to try next. Exhaustive for spaces that
// the budget covers; the model-based hybrid search for spaces it does not
// (search_plan.hpp picks between them); a budgeted random sample as the
// baseline every search benchmark compares against.
//
// The tuner's search driver asks a strategy for configs (a few ahead, so
// the compile pool runs ahead of the benchmark workers: SearchPacing),
// runs them through the pipeline and reports every result back in proposal
// order; a strategy never proposes a config twice. Strategies are found by name in
// search_strategies(): a new one is one file (a SearchStrategy and its SearchStrategyInfo) plus one
// line: in the list in lib/search/search_registry.cpp for a built-in one, or one
// register_search_strategy call for an application's (docs/architecture.md,
// "Extending Kiln"; tests/search/extending_strategy_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/core/config_space.hpp"
#include "kiln/core/problem.hpp"

namespace kiln {

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual const char* name() const = 0;
  // Up to `max_batch` configs not proposed before; empty when the search is
  // over (space exhausted or budget spent).
  virtual std::vector<Config> next(std::size_t max_batch) = 0;
  // The measured median in seconds, or nullopt when the config failed.
  virtual void report(const Config& config, std::optional<double> seconds) = 0;
  // True when later proposals depend on earlier times: the driver then asks
  // for more as results are reported (SearchPacing: a few in flight, or in
  // rounds). False: one round of every proposal.
  virtual bool steered() const { return false; }
  // Steered only: proposals wanted in the first round, before any feedback
  // is worth having (hybrid's space-filling opening); the round is never smaller
  // than the batch.
  virtual std::size_t first_round() const { return 0; }
};

// How a steered search is fed (SearchOptions::batch and in_flight). By
// default the driver keeps kDefaultInFlight proposals in flight and asks
// for one more as each result lands, so no worker waits for a round to end
// and each proposal knows every result in by then; with `batch` set it
// proposes in rounds of that many and waits for each round.
inline constexpr std::size_t kDefaultInFlight = 3;
struct SearchPacing {
  std::size_t batch = 0;      // > 0: rounds of this many
  std::size_t in_flight = 0;  // 0: kDefaultInFlight (read when batch is 0)
  bool rounds() const { return batch > 0; }
  std::size_t window() const { return batch ? batch : in_flight ? in_flight : kDefaultInFlight; }
};

// Every candidate, in the given order.
std::unique_ptr<SearchStrategy> make_exhaustive_search(std::vector<Config> candidates);

// `budget` distinct valid configs drawn uniformly from the space (seeded:
// the same seed draws the same configs). Works on spaces too large to
// enumerate: draws by index and rejects configs that violate constraints.
// `listed` (optional, borrowed for the search's life): the space's valid
// configs, drawn from when rejection fails (SearchSetup::listed).
std::unique_ptr<SearchStrategy> make_random_search(const ConfigSpace& space, std::size_t budget,
                                                   std::uint64_t seed,
                                                   const std::vector<Config>* listed = nullptr);

// What other devices measured of the kernel being tuned (their tuning
// records in a shared cache), as a prior for this device's times
// (docs/autotuning.md, "Seeds from other devices"): per config, its time
// on each other device in log units above that device's fastest, clipped
// at that device's median (a failure counts 0.5 above it), averaged over
// the devices. Lower is faster elsewhere. gp fits how far this device
// follows it from its own measurements (a scale that is 0 where they
// disagree), so it weights proposals and never confines them.
struct DevicePrior {
  std::unordered_map<std::string, double> score;  // by Config::key()
  double unknown = 0;                             // a config no other device measured
  std::size_t devices = 0;                        // how many it averages
  double at(const Config& c) const {
    const auto it = score.find(c.key());
    return it == score.end() ? unknown : it->second;
  }
};

// What a registered strategy is made from, for one tuning call.
struct SearchSetup {
  const ConfigSpace* space = nullptr;
  // Configs measured in all, the default included (SearchOptions::max_configs,
  // or the strategy's default_budget when that is 0; 0 = no limit).
  std::size_t max_configs = 0;
  // The default config, which the driver measures first and itself when the
  // kernel's early prune keeps it (`default_measured`): a proposal equal to
  // it is dropped there.
  Config start;
  bool default_measured = true;
  std::uint64_t seed = 0;
  // Optional (borrowed; outlives the search): every valid config, where the
  // space is a list (a recorded space). Samplers draw by index and reject
  // invalid configs; on a sparse space (300 valid of 2^20) that fails, and
  // they then draw from the untaken configs of this list instead.
  const std::vector<Config>* listed = nullptr;
  // Optional: other devices' times of this kernel (DevicePrior); gp, alone
  // or as hybrid's, reads it. Null: none (the tuner passes none: measured
  // on recorded spaces it did not hold on every device, docs/autotuning.md).
  // Shared, not borrowed: each of hybrid's parts keeps it.
  std::shared_ptr<const DevicePrior> prior;
};

// A search strategy by name, for TuneOptions::search.strategy and
// `kiln tune --search NAME` (`--search list` prints them).
struct SearchStrategyInfo {
  std::string name;
  std::string description;  // one line
  // max_configs when the caller gives 0: 0 = every proposal (exhaustive).
  std::size_t default_budget = 0;
  std::function<std::unique_ptr<SearchStrategy>(const SearchSetup&)> make;
};

// Adds a strategy after the built-in ones (exhaustive, random, hybrid), for
// TuneOptions::search.strategy and every list of strategies; safe to call
// from any thread at any time. Throws kiln::Error (kInvalidArgument) for an
// empty name, "auto" (the default plan's name), a missing factory, or a name
// already registered: a strategy is never replaced, since a tuning may be
// running it.
void register_search_strategy(SearchStrategyInfo info);

// The registered strategies at the time of the call, in registration order.
// Each element is the registered object itself, valid for the process's
// life: registration never moves one (find_search_strategy returns the
// same address).
class SearchStrategyList {
 public:
  class iterator {
   public:
    using value_type = SearchStrategyInfo;
    using difference_type = std::ptrdiff_t;
    using reference = const SearchStrategyInfo&;
    using pointer = const SearchStrategyInfo*;
    using iterator_category = std::forward_iterator_tag;
    iterator() = default;
    explicit iterator(const SearchStrategyInfo* const* at) : at_(at) {}
    reference operator*() const { return **at_; }
    pointer operator->() const { return *at_; }
    iterator& operator++() {
      ++at_;
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++at_;
      return before;
    }
    bool operator==(const iterator&) const = default;

   private:
    const SearchStrategyInfo* const* at_ = nullptr;
  };

  explicit SearchStrategyList(std::vector<const SearchStrategyInfo*> items)
      : items_(std::move(items)) {}
  iterator begin() const { return iterator(items_.data()); }
  iterator end() const { return iterator(items_.data() + items_.size()); }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const SearchStrategyInfo& operator[](std::size_t i) const { return *items_[i]; }

 private:
  std::vector<const SearchStrategyInfo*> items_;
};

// Every registered strategy, in registration order.
SearchStrategyList search_strategies();
// The strategy called `name`, or nullptr; valid for the process's life.
const SearchStrategyInfo* find_search_strategy(std::string_view name);
// Whether the strategy called `name` is steered (SearchStrategy::steered:
// it proposes from results, so SearchPacing applies to it); false for an
// unknown name.
bool search_is_steered(std::string_view name);
// "exhaustive, random, hybrid": for errors that name the valid choices.
std::string search_strategy_names();

// Pruning hooks. A performance model estimates a config's time (lower is
// better) without running it; an early prune sees the problem and removes
// configs that cannot serve it (a tile larger than the matrix).
using PerfModel = std::function<double(const Config&, const ProblemKey&)>;
using EarlyPrune = std::function<bool(const Config&, const ProblemKey&)>;  // true = keep

// The `k` configs the model ranks best, in model order (stable for ties).
std::vector<Config> prune_top_k(std::vector<Config> configs, const ProblemKey& problem,
                                const PerfModel& model, std::size_t k);
std::vector<Config> prune_early(std::vector<Config> configs, const ProblemKey& problem,
                                const EarlyPrune& keep);

}  // namespace kiln
