// Shared by the search strategies: the sampler of the random and annealing
// searches, and each strategy's registry entry (listed in search_registry.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <unordered_set>

#include "kiln/core/config_space.hpp"
#include "kiln/tuner/search.hpp"

namespace kiln::internal {

// Draws valid configs uniformly by odometer index, never the same one twice.
class UniqueSampler {
 public:
  UniqueSampler(ConfigSpace space, std::uint64_t seed);
  const ConfigSpace& space() const { return space_; }
  std::optional<Config> draw();
  // Records `config` as taken; false when it already was.
  bool mark(const Config& config);
  // Whether `config` was drawn or marked already.
  bool taken(const Config& config) const;
  std::mt19937_64& rng() { return rng_; }

 private:
  ConfigSpace space_;
  std::uint64_t index_of(const Config& config) const;
  std::mt19937_64 rng_;
  std::uint64_t size_;
  std::unordered_set<std::uint64_t> tried_;
};

SearchStrategyInfo exhaustive_strategy();
SearchStrategyInfo random_strategy();
SearchStrategyInfo annealing_strategy();
SearchStrategyInfo model_strategy();

}  // namespace kiln::internal
