// Exhaustive and random search, and the pruning hooks.
#include <algorithm>
#include <numeric>
#include <random>

#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"
#include "kiln/search/search.hpp"
#include "search/internal/search_internal.hpp"

namespace kiln {

namespace {

class ExhaustiveSearch final : public SearchStrategy {
 public:
  explicit ExhaustiveSearch(std::vector<Config> candidates) : candidates_(std::move(candidates)) {}
  const char* name() const override { return "exhaustive"; }
  std::vector<Config> next(std::size_t max_batch) override {
    std::vector<Config> batch;
    while (batch.size() < max_batch && pos_ < candidates_.size())
      batch.push_back(candidates_[pos_++]);
    return batch;
  }
  void report(const Config&, std::optional<double>) override {}

 private:
  std::vector<Config> candidates_;
  std::size_t pos_ = 0;
};

// Every config of a space in enumerate() order, found as it is asked for:
// listing a space up front walks its whole cartesian product before the
// first proposal, which never ends on a sparse space of many parameters
// (a recorded file's 64 two-valued parameters) and ignored --max-configs.
class SpaceWalk final : public SearchStrategy {
 public:
  explicit SpaceWalk(ConfigSpace space)
      : space_(std::move(space)), size_(space_.cartesian_size()) {}
  const char* name() const override { return "exhaustive"; }
  std::vector<Config> next(std::size_t max_batch) override {
    std::vector<Config> batch;
    while (batch.size() < max_batch && pos_ < size_) {
      // A space whose constraints keep almost nothing of a huge product
      // would scan for hours between two configs: past kScanLimit
      // candidates without one, the walk ends, saying so.
      if (++since_found_ > kScanLimit) {
        KILN_LOG(kWarn) << "exhaustive search: none of " << kScanLimit
                        << " candidates from position " << pos_ - kScanLimit << " of " << size_
                        << " satisfies the space's constraints; the walk stops there. Use "
                           "--search random or bayes on a space this sparse";
        pos_ = size_;
        break;
      }
      // config_at gives members by construction: only the constraints to check.
      Config c = space_.config_at(pos_++);
      if (space_.violated(c).empty()) {
        batch.push_back(std::move(c));
        since_found_ = 0;
      }
    }
    return batch;
  }
  void report(const Config&, std::optional<double>) override {}

 private:
  // 2^23: a space of up to 8M configs before its constraints is always
  // walked whole; past that only a run of 8M unsatisfying candidates ends it.
  static constexpr std::uint64_t kScanLimit = std::uint64_t{1} << 23;
  ConfigSpace space_;
  std::uint64_t size_;
  std::uint64_t pos_ = 0;
  std::uint64_t since_found_ = 0;  // candidates scanned since the last config found
};

class RandomSearch final : public SearchStrategy {
 public:
  RandomSearch(const ConfigSpace& space, std::size_t budget, std::uint64_t seed,
               const std::vector<Config>* listed)
      : sampler_(space, seed, listed), budget_(budget) {}
  const char* name() const override { return "random"; }
  std::vector<Config> next(std::size_t max_batch) override {
    std::vector<Config> batch;
    while (batch.size() < max_batch && proposed_ < budget_) {
      auto c = sampler_.draw();
      if (!c) break;  // the space has no more unseen valid configs
      batch.push_back(std::move(*c));
      ++proposed_;
    }
    return batch;
  }
  void report(const Config&, std::optional<double>) override {}

 private:
  internal::UniqueSampler sampler_;
  std::size_t budget_;
  std::size_t proposed_ = 0;
};

}  // namespace

namespace internal {

UniqueSampler::UniqueSampler(ConfigSpace space, std::uint64_t seed,
                             const std::vector<Config>* listed)
    : space_(std::move(space)), rng_(seed), size_(space_.cartesian_size()), listed_(listed) {}

std::optional<Config> UniqueSampler::draw() {
  if (size_ == 0) return std::nullopt;
  if (sparse_) return draw_listed();
  // Rejection sampling by index; give up after many misses in a row, which
  // only happens when almost every unseen index is invalid or taken.
  std::uniform_int_distribution<std::uint64_t> pick(0, size_ - 1);
  for (int attempt = 0; attempt < 10000; ++attempt) {
    std::uint64_t index = pick(rng_);
    if (tried_.count(index)) continue;
    tried_.insert(index);
    Config c = space_.config_at(index);
    if (space_.violated(c).empty()) return c;
    if (tried_.size() >= size_) return std::nullopt;
  }
  // NOTES: only here, where rejection failed, does the list change what is
  // drawn: a space where rejection works draws exactly as without one.
  sparse_ = listed_ != nullptr;
  return sparse_ ? draw_listed() : std::nullopt;
}

std::uint64_t UniqueSampler::listed_index(std::size_t i) {
  if (listed_index_.empty())
    for (const Config& c : *listed_) listed_index_.push_back(index_of(c));
  return listed_index_[i];
}

// Uniform over the listed configs not taken yet (a scan: the list is short
// next to the 10,000 rejections that led here).
std::optional<Config> UniqueSampler::draw_listed() {
  if (!listed_->empty()) listed_index(0);  // every listed config's index
  std::vector<std::size_t> untaken;
  for (std::size_t i = 0; i < listed_index_.size(); ++i)
    if (!tried_.count(listed_index_[i])) untaken.push_back(i);
  if (untaken.empty()) return std::nullopt;
  std::uniform_int_distribution<std::size_t> pick(0, untaken.size() - 1);
  const std::size_t at = untaken[pick(rng_)];
  tried_.insert(listed_index_[at]);
  return (*listed_)[at];
}

std::uint64_t UniqueSampler::index_of(const Config& config) const {
  std::uint64_t index = 0;
  for (const auto& p : space_.parameters()) {
    auto it = std::find(p.values.begin(), p.values.end(), config.at(p.name));
    index = index * p.values.size() + static_cast<std::uint64_t>(it - p.values.begin());
  }
  return index;
}

bool UniqueSampler::mark(const Config& config) {
  return tried_.insert(index_of(config)).second;
}

BudgetedSearch::BudgetedSearch(const SearchSetup& setup, std::size_t first_round)
    : sampler_(*setup.space, setup.seed, setup.listed),
      budget_(setup.max_configs),
      first_round_(first_round) {
  if (setup.default_measured) sampler_.mark(setup.start);
}

std::vector<Config> BudgetedSearch::next(std::size_t max_batch) {
  std::vector<Config> batch;
  if (budget_ && proposed_ >= budget_) return batch;
  max_batch = std::min(max_batch, budget_ ? budget_ - proposed_ : max_batch);
  if (proposed_ >= first_round_) batch = propose(max_batch);
  while (batch.size() < max_batch) {  // the first round, or what the strategy left
    std::optional<Config> c = sampler_.draw();
    if (!c) break;
    batch.push_back(std::move(*c));
  }
  proposed_ += batch.size();
  return batch;
}

std::vector<Config> untaken_neighbours(const UniqueSampler& sampler, const Config& config) {
  std::vector<Config> out;
  for (const Parameter& p : sampler.space().parameters()) {
    for (const Value& v : p.values) {
      if (v == config.at(p.name)) continue;
      Config n = config;
      n.set(p.name, v);
      if (!sampler.taken(n) && sampler.space().contains(n)) out.push_back(std::move(n));
    }
  }
  return out;
}

bool UniqueSampler::taken(const Config& config) const {
  return tried_.count(index_of(config)) > 0;
}

}  // namespace internal

std::unique_ptr<SearchStrategy> make_exhaustive_search(std::vector<Config> candidates) {
  return std::make_unique<ExhaustiveSearch>(std::move(candidates));
}

std::unique_ptr<SearchStrategy> make_random_search(const ConfigSpace& space, std::size_t budget,
                                                   std::uint64_t seed,
                                                   const std::vector<Config>* listed) {
  return std::make_unique<RandomSearch>(space, budget, seed, listed);
}

namespace internal {

SearchStrategyInfo exhaustive_strategy() {
  return {"exhaustive", "every config of the space, ranked by the kernel's model when it has one",
          0, [](const SearchSetup& setup) -> std::unique_ptr<SearchStrategy> {
            return std::make_unique<SpaceWalk>(*setup.space);
          }};
}

// Registered as the baseline: every search benchmark (the lab's `bench search`)
// measures the other strategies against a uniform sample of the same budget.
SearchStrategyInfo random_strategy() {
  return {"random", "a seeded uniform sample of the space: the baseline searches are compared with",
          64, [](const SearchSetup& setup) {
            return make_random_search(*setup.space, setup.max_configs, setup.seed, setup.listed);
          }};
}

}  // namespace internal

std::vector<Config> prune_top_k(std::vector<Config> configs, const ProblemKey& problem,
                                const PerfModel& model, std::size_t k) {
  if (!model) throw Error(ErrorCode::kInvalidArgument, "prune_top_k needs a performance model");
  std::vector<double> score(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) score[i] = model(configs[i], problem);
  std::vector<std::size_t> order(configs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return score[a] < score[b]; });
  order.resize(std::min(k, order.size()));
  std::vector<Config> out;
  for (auto i : order) out.push_back(std::move(configs[i]));
  return out;
}

std::vector<Config> prune_early(std::vector<Config> configs, const ProblemKey& problem,
                                const EarlyPrune& keep) {
  if (!keep) return configs;
  std::erase_if(configs, [&](const Config& c) { return !keep(c, problem); });
  return configs;
}

}  // namespace kiln
