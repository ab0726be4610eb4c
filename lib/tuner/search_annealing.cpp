// Simulated annealing over a config space: a random start, then moves to a
// neighbour (one parameter stepped to an adjacent value in its list), accepted
// when faster, or slower with probability exp(-(t_new/t_cur - 1) / T). The
// temperature falls geometrically over the budget, so the search explores
// first and settles later. Relative time makes T independent of the scale.
#include <cmath>
#include <random>

#include "kiln/core/error.hpp"
#include "kiln/tuner/search.hpp"
#include "search_internal.hpp"

namespace kiln {

namespace {

class AnnealingSearch final : public SearchStrategy {
 public:
  AnnealingSearch(const ConfigSpace& space, AnnealingOptions options,
                  const std::vector<Config>* listed)
      : sampler_(space, options.seed, listed), options_(options) {
    if (options_.initial_temperature <= 0 || options_.final_temperature <= 0) {
      throw Error(ErrorCode::kInvalidArgument, "annealing temperatures must be positive");
    }
    if (options_.start) {
      if (!sampler_.space().contains(*options_.start)) {
        throw Error(ErrorCode::kInvalidArgument,
                    "annealing start {" + options_.start->to_string() + "} is not in the space");
      }
      sampler_.mark(*options_.start);
      start_first_ = options_.propose_start;
    }
  }
  const char* name() const override { return "annealing"; }
  bool steered() const override { return true; }
  std::size_t first_round() const override { return random_round(); }

  std::vector<Config> next(std::size_t max_batch) override {
    std::vector<Config> batch;
    if (start_first_ && max_batch > 0 && proposed_ < options_.budget) {
      batch.push_back(*options_.start);  // marked taken in the constructor
      start_first_ = false;
      ++proposed_;
    }
    while (batch.size() < max_batch && proposed_ < options_.budget) {
      std::optional<Config> c;
      if (proposed_ >= random_round() && current_) c = neighbour();
      if (!c) c = sampler_.draw();  // random start, or no unseen neighbour left
      if (!c) break;
      batch.push_back(std::move(*c));
      ++proposed_;
    }
    return batch;
  }

  void report(const Config& config, std::optional<double> seconds) override {
    ++reported_;
    // NOTES: one draw per report, used or not, so the random stream (and with
    // it every later proposal) does not depend on whether this config came
    // out better or worse: a seed repeats its walk whenever the comparisons
    // repeat, whatever the noise in the magnitudes.
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const double draw = u(sampler_.rng());
    if (!seconds) return;  // a failed config is never a place to stand
    if (!current_ || *seconds < current_time_) {
      accept(config, *seconds);
      return;
    }
    double progress = static_cast<double>(reported_) / static_cast<double>(options_.budget);
    double t = options_.initial_temperature *
               std::pow(options_.final_temperature / options_.initial_temperature, progress);
    double worse = *seconds / current_time_ - 1.0;
    if (draw < std::exp(-worse / t)) accept(config, *seconds);
  }

 private:
  // The proposals before the walk: the start when this search proposes it,
  // then the random ones.
  std::size_t random_round() const {
    return options_.random_start + (options_.propose_start && options_.start ? 1 : 0);
  }

  void accept(const Config& config, double seconds) {
    current_ = config;
    current_time_ = seconds;
  }

  // A valid, unseen config one step from the current one, or nullopt.
  std::optional<Config> neighbour() {
    const auto& params = sampler_.space().parameters();
    std::uniform_int_distribution<std::size_t> which(0, params.size() - 1);
    std::uniform_int_distribution<int> direction(0, 1);
    for (int attempt = 0; attempt < 64; ++attempt) {
      const Parameter& p = params[which(sampler_.rng())];
      if (p.values.size() < 2) continue;
      const Value& now = current_->at(p.name);
      std::size_t i = 0;
      while (p.values[i] != now) ++i;
      std::size_t j = direction(sampler_.rng()) ? i + 1 : (i == 0 ? 1 : i - 1);
      if (j >= p.values.size()) j = i - 1;
      Config c = *current_;
      c.set(p.name, p.values[j]);
      if (!sampler_.space().violated(c).empty()) continue;
      if (sampler_.mark(c)) return c;
    }
    return std::nullopt;
  }

  internal::UniqueSampler sampler_;
  AnnealingOptions options_;
  std::size_t proposed_ = 0;
  std::size_t reported_ = 0;
  bool start_first_ = false;  // the start is still to be proposed
  std::optional<Config> current_;
  double current_time_ = 0;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_annealing_search(const ConfigSpace& space,
                                                      AnnealingOptions options,
                                                      const std::vector<Config>* listed) {
  return std::make_unique<AnnealingSearch>(space, options, listed);
}

namespace internal {

SearchStrategyInfo annealing_strategy() {
  return {"annealing",
          "a random start, then steps to neighbouring configs, steered by their times (rounds)", 64,
          [](const SearchSetup& setup) -> std::unique_ptr<SearchStrategy> {
            AnnealingOptions options = setup.annealing;
            // The default is measured besides the proposals: never proposed,
            // it is where the walk starts. Where the driver does not measure
            // it and the caller asks (a replay), the walk proposes it first.
            const std::optional<std::size_t> budget = proposal_budget(setup);
            if (!budget) return std::make_unique<SpentSearch>("annealing");
            options.budget = *budget;
            options.seed = setup.seed;
            options.start = setup.start;
            options.propose_start = options.propose_start && !setup.default_measured;
            return make_annealing_search(*setup.space, options, setup.listed);
          }};
}

}  // namespace internal

}  // namespace kiln
