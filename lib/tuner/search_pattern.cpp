// Pattern search: a random first round, then a walk that measures every
// unmeasured neighbour of the best config so far (each parameter one step
// either way along its list, then two when one step is exhausted) and moves
// to whichever is faster; when no neighbour within two steps is left it
// restarts from a random config. Cheap, no model, good at climbing the last
// few percent once a good region is found.
#include <algorithm>
#include <deque>

#include "kiln/tuner/search.hpp"
#include "search_internal.hpp"

namespace kiln {
namespace {

class PatternSearch final : public internal::BudgetedSearch {
 public:
  explicit PatternSearch(const SearchSetup& setup)
      : BudgetedSearch(
            setup, std::clamp<std::size_t>(setup.max_configs ? setup.max_configs / 10 : 8, 4, 8)) {}
  const char* name() const override { return "pattern"; }

  std::vector<Config> propose(std::size_t n) override {
    std::vector<Config> batch;
    if (!best_) return batch;
    if (queue_.empty()) fill_queue();
    while (batch.size() < n && !queue_.empty()) {
      Config c = std::move(queue_.front());
      queue_.pop_front();
      if (sampler().mark(c)) batch.push_back(std::move(c));
    }
    return batch;  // empty: a restart from a random config
  }

  void report(const Config& config, std::optional<double> seconds) override {
    if (seconds && (!best_ || *seconds < best_time_)) {
      best_ = config;
      best_time_ = *seconds;
      queue_.clear();  // the walk moved: its neighbours are the new frontier
    }
  }

 private:
  // The unmeasured neighbours of the best config: one step first, then two.
  void fill_queue() {
    for (int step : {1, 2}) {
      for (Config& n : internal::neighbours_at(sampler().space(), *best_, step))
        if (!sampler().taken(n)) queue_.push_back(std::move(n));
      if (!queue_.empty()) return;
    }
  }

  std::optional<Config> best_;
  double best_time_ = 0;
  std::deque<Config> queue_;
};

}  // namespace

namespace internal {

SearchStrategyInfo pattern_strategy() {
  return steered_strategy<PatternSearch>(
      "pattern",
      "a random start, then measures the neighbours of the best config so far and moves to "
      "the fastest (rounds)",
      64);
}

}  // namespace internal
}  // namespace kiln
