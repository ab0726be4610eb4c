// The default search for large spaces ("hybrid"): bayes (search_bayes.cpp)
// proposes the opening (0.6% of the space, 16 to 64 configs), gp
// (search_gp.cpp) the rest; both are told every measurement from the first.
// Where the space has thread-block parameters, both search blocks of whole
// warps first (search_whole_warps.hpp), and a third part, gp over the whole
// space, proposes a share of every batch from the first, a share that grows
// at each plateau, and takes over after 3% of the space.
//
// Why two: each is ahead where the other is weak. bayes's opening (a
// space-filling start, then forest picks kept apart from one another) finds
// a good region within the first 1% of a space more often than gp's random
// start; gp, once it has data, pins a lone optimum sooner than the forest.
// On recorded spaces this opening-then-gp keeps up with the better of the
// two at small shares of the space, where either alone falls behind on
// some (docs/autotuning.md, "Searches", Hybrid; measured:
// docs/lab/search-journal.md, "The hybrid strategy").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "kiln/search/search.hpp"
#include "kiln/search/search_plan.hpp"
#include "search/internal/search_internal.hpp"
#include "search/internal/search_whole_warps.hpp"

namespace kiln {
namespace {

// bayes's part: 0.6% of the space (a fifth of the default plan's 3%), within
// [16, 64] configs and at most the budget. On the recorded convolution spaces
// an opening of this size was ahead of gp alone and bayes alone on one and a
// little behind them on the other, and an opening of bayes's space-filling
// start alone did worse than gp's random start. It is a share of the space, not
// of the budget, so that a larger budget does not lengthen the opening past the
// point where gp does better (measured: docs/lab/search-journal.md, "The hybrid
// strategy", the opening's table).
constexpr double kOpeningShare = 0.006;
constexpr std::size_t kOpeningAtLeast = 16, kOpeningAtMost = 64;
// The prior of search_whole_warps.hpp: for the first 3% of the space (the
// default plan's budget) both parts propose only blocks of whole warps, then
// a gp over the whole space takes over, told every measurement. Off where
// such blocks are under a tenth of the space: there the space's author did
// not mean x to be a warp's row (the dedispersion spaces' block_size_x runs
// 1 to 32, and 1% of their configs would pass). With the rule, on the recorded
// convolution spaces more seeds reach near the optimum by 1% of the space, and
// as many or more by 2% (docs/autotuning.md, "Searches", "Blocks of whole warps
// first"; measured: docs/lab/search-spaces-journal.md, "Blocks of whole warps
// first").
// Inside that part, gp's model reads each integer by its value and its
// place alone, without the power-of-two codes (search_gp.cpp): those were
// to tell an aligned block from a ragged one, which the rule has done, and
// kept they made each block or tile change count two or three times over
// in a kernel that counts the codes two configs differ in. Without them
// more seeds reach near the optimum by 1% and 2% of the space (measured:
// docs/lab/search-spaces-journal.md, "Whole-warp blocks without alignment
// codes").
constexpr double kPreferredShare = 0.03;
constexpr double kPreferredAtLeast = 0.1;
// Priors bias, never confine. A share of every batch comes from outside
// what the parts prefer: where the whole-warp rule applies, gp over the
// whole space (wide_, told every measurement) proposes it, else uniform
// draws. A plateau, kPlateauShare of the planned budget (at least
// kPlateauAtLeast) measured with no better time, doubles the share, up to
// kOutsideAtMost: a rule the visible spaces supported costs a space it does
// not fit a share of its budget, never the whole of it (docs/autotuning.md,
// "Priors bias, never confine"; chosen leave-one-out on the recorded
// spaces: docs/lab/priors-journal.md).
constexpr double kOutsideShare = 1.0 / 16, kPlateauShare = 1.0 / 4;
constexpr std::size_t kPlateauAtLeast = 8;
constexpr double kOutsideAtMost = 0.5;
constexpr int kAsks = 4;  // times a part is asked again when its picks were taken
constexpr std::uint64_t kCountedWhole = 16384;  // cartesian configs counted one by one

// The space's valid configs: counted up to kCountedWhole cartesian configs,
// else estimated from that many evenly spaced ones. The opening needs no
// more (64 configs is its cap from 10,667 on), and counting a space of a
// million configs config by config costs more than the search it sizes.
double valid_configs(const ConfigSpace& space) {
  const std::uint64_t n = space.cartesian_size();
  if (space.constraints().empty() || n == 0) return static_cast<double>(n);
  const std::uint64_t probes = std::min(n, kCountedWhole);
  std::uint64_t valid = 0;
  for (std::uint64_t i = 0; i < probes; ++i)
    valid += space.contains(space.config_at(
        static_cast<std::uint64_t>(static_cast<long double>(i) * static_cast<long double>(n) /
                                   static_cast<long double>(probes))));
  return static_cast<double>(n) * static_cast<double>(valid) / static_cast<double>(probes);
}

class HybridSearch final : public SearchStrategy {
 public:
  HybridSearch(const SearchSetup& setup, std::size_t budget, internal::HybridKnobs knobs)
      : budget_(budget), outside_share_(knobs.outside_share) {
    const double whole = valid_configs(*setup.space);
    double opened = whole;  // becomes the narrowed part's, where the prior applies
    const SearchSetup narrow = preferred_part(setup, opened);
    // bayes paces its exploration by its budget (kappa, rounds kept apart):
    // told the run's, a 10% run opened otherwise than a 3% one and reached
    // a different best by 1% of the space. Told the default plan's budget
    // whatever the run's, the opening is the same at every budget.
    SearchSetup paced = narrow;
    paced.max_configs =
        effort_budget(static_cast<std::uint64_t>(std::llround(whole)), SearchEffort::kDefault);
    opening_ = internal::bayes_strategy().make(paced);
    rest_ = internal::make_gp_search(narrow, 0, {}, !preferred_space_);
    if (preferred_space_) wide_ = internal::make_gp_search(setup, 0);
    const auto share = static_cast<std::size_t>(std::lround(kOpeningShare * opened));
    opening_size_ = std::clamp(share, kOpeningAtLeast, kOpeningAtMost);
    if (budget) opening_size_ = std::min(budget, opening_size_);
    if (setup.default_measured) {
      proposed_configs_.insert(setup.start.key());
      own_.insert(setup.start.key());
    }
    const double planned =
        budget ? static_cast<double>(budget)
               : static_cast<double>(effort_budget(static_cast<std::uint64_t>(std::llround(whole)),
                                                   SearchEffort::kDefault));
    plateau_ = std::max(kPlateauAtLeast,
                        static_cast<std::size_t>(std::lround(knobs.plateau_share * planned)));
    outside_.emplace(*setup.space, setup.seed ^ 0x9e3779b97f4a7c15ULL, setup.listed);
  }
  const char* name() const override { return "hybrid"; }
  bool steered() const override { return true; }
  std::size_t first_round() const override { return opening_->first_round(); }

  std::vector<Config> next(std::size_t max_batch) override {
    std::vector<Config> out;
    if (budget_ && proposed_ >= budget_) return out;
    if (budget_) max_batch = std::min(max_batch, budget_ - proposed_);
    take_outside(max_batch, out);
    // The opening, then the whole-warp part, each up to its share of the
    // proposals; wide_ (or rest_ where there is no prior) for the rest.
    if (const std::size_t at = proposed_ + out.size(); at < opening_size_)
      take(*opening_, std::min(max_batch - out.size(), opening_size_ - at), out);
    if (const std::size_t at = proposed_ + out.size();
        at < preferred_until_ && out.size() < max_batch)
      take(*rest_, std::min(max_batch - out.size(), preferred_until_ - at), out);
    if (out.size() < max_batch) take(wide_ ? *wide_ : *rest_, max_batch - out.size(), out);
    proposed_ += out.size();
    return out;
  }

  void report(const Config& config, std::optional<double> seconds) override {
    proposed_configs_.insert(config.key());
    watch_plateau(seconds);
    // A config neither part proposed (nor the default) is a warm start's
    // seed: what other tunings found fast. gp hears it; bayes's opening
    // does not, so the opening maps this device's own space first. Told of
    // seeds from other devices, the opening climbed their region: where
    // those seeds are far from this device's optimum, the run did worse
    // than with the opening cold, and worse than with no warm start at all
    // (docs/autotuning.md, "Across tunings", "Seeds from other devices";
    // measured: docs/lab/search-spaces-journal.md, "A warm start from other
    // devices").
    // The narrowed parts hear only configs of their space: their models
    // place a value by its position in the cut lists, and a block off the
    // rule (the default, a seed, wide_'s picks) has none there.
    const bool narrow_hears = !preferred_space_ || preferred_space_->contains(config);
    if (narrow_hears && own_.count(config.key())) opening_->report(config, seconds);
    if (narrow_hears) rest_->report(config, seconds);
    if (wide_) wide_->report(config, seconds);
  }

 private:
  // `setup` narrowed to blocks of whole warps where the prior applies
  // (kPreferredAtLeast), else `setup` itself. `valid`, the space's valid
  // configs, becomes the narrowed part's where it does (the opening's
  // share is of the part the opening searches); sets preferred_until_.
  SearchSetup preferred_part(const SearchSetup& setup, double& valid) {
    std::optional<Constraint> rule = internal::whole_warps_rule(*setup.space);
    if (!rule) return setup;
    ConfigSpace narrowed = internal::whole_warps_space(*setup.space, *rule);
    const double part = valid_configs(narrowed);
    if (part < kPreferredAtLeast * valid || part >= valid) return setup;
    preferred_space_ = std::move(narrowed);
    SearchSetup narrow = setup;
    narrow.space = &*preferred_space_;
    if (setup.listed) {
      for (const Config& c : *setup.listed)
        if (rule->predicate(c)) preferred_listed_.push_back(c);
      narrow.listed = &preferred_listed_;
    }
    preferred_until_ = static_cast<std::size_t>(std::lround(kPreferredShare * valid));
    valid = part;
    return narrow;
  }

  // The outside share of this batch: owed_ gathers share per proposal, and
  // each whole one owed is a uniform draw no part proposed.
  void take_outside(std::size_t max_batch, std::vector<Config>& out) {
    for (std::size_t i = 0; i < max_batch; ++i) {
      owed_ += outside_share_;
      if (owed_ < 1.0) continue;
      if (wide_) {
        const std::size_t before = out.size();
        take(*wide_, 1, out);
        if (out.size() > before) {
          owed_ -= 1.0;
          continue;
        }
      }
      for (int ask = 0; ask < kAsks; ++ask) {
        std::optional<Config> c = outside_->draw();
        if (!c) break;
        if (proposed_configs_.insert(c->key()).second) {
          out.push_back(std::move(*c));
          owed_ -= 1.0;
          break;
        }
      }
      if (owed_ >= 1.0) owed_ = 0;  // nothing left to draw: forgive the debt
    }
  }

  // Counts measurements since the best time last improved; at a plateau,
  // doubles the outside share. (Ending the rule's part there as well cost
  // the recorded convolutions at 1% of the space: docs/lab/priors-journal.md.)
  void watch_plateau(std::optional<double> seconds) {
    if (seconds && *seconds < best_) {
      best_ = *seconds;
      stale_ = 0;
      return;
    }
    if (outside_share_ == 0 || ++stale_ < plateau_) return;
    stale_ = 0;
    outside_share_ = std::min(kOutsideAtMost, outside_share_ * 2);
  }

  // Up to `n` of `part`'s proposals into `out`, none proposed before by
  // either part. gp learns of bayes's picks when they are reported; a pick
  // the driver dropped (a neighbour's winner, a config that failed before)
  // is never reported, and gp may propose it again: it is skipped here and
  // gp asked again.
  void take(SearchStrategy& part, std::size_t n, std::vector<Config>& out) {
    const std::size_t want = out.size() + n;
    for (int ask = 0; ask < kAsks && out.size() < want; ++ask) {
      std::vector<Config> picks = part.next(want - out.size());
      if (picks.empty()) break;
      for (Config& c : picks) {
        own_.insert(c.key());
        if (proposed_configs_.insert(c.key()).second) out.push_back(std::move(c));
      }
    }
  }

  // The narrowed space and its listed configs, which the parts borrow.
  std::optional<ConfigSpace> preferred_space_;
  std::vector<Config> preferred_listed_;
  std::size_t preferred_until_ = 0;  // proposals of whole-warp blocks only (0: no prior)
  // rest_: gp over the preferred part where the prior applies, else the space;
  // wide_: gp over the whole space after the preferred part's share.
  std::unique_ptr<SearchStrategy> opening_, rest_, wide_;
  std::unordered_set<std::string> own_;  // proposed by either part, and the default
  std::size_t budget_;                   // 0: no limit
  std::size_t opening_size_ = 0;
  std::size_t proposed_ = 0;
  std::unordered_set<std::string> proposed_configs_;
  // Outside the parts' preference (take_outside) and plateaus (watch_plateau).
  std::optional<internal::UniqueSampler> outside_;
  double outside_share_, owed_ = 0;
  double best_ = std::numeric_limits<double>::infinity();
  std::size_t stale_ = 0, plateau_ = 0;
};

}  // namespace

namespace internal {

SearchStrategyInfo hybrid_strategy() {
  return {"hybrid",
          "the default for large spaces: bayes's space-filling start and forest propose the "
          "opening (0.6% of the space, 16 to 64 configs), then gp's Gaussian process the rest, "
          "both learning from "
          "every measurement; where the space names block_size_x (Kernel Tuner's names), "
          "thread blocks of whole warps weighted first, for 3% of the space, with a share of "
          "every batch (growing at plateaus) from a gp over the whole space",
          64, [](const SearchSetup& setup) -> std::unique_ptr<SearchStrategy> {
            return make_hybrid_search(setup, hybrid_knobs());
          }};
}

HybridKnobs hybrid_knobs() {
  return {kOutsideShare, kPlateauShare};
}

std::unique_ptr<SearchStrategy> make_hybrid_search(const SearchSetup& setup, HybridKnobs knobs) {
  const std::optional<std::size_t> budget = proposal_budget(setup);
  if (!budget) return std::make_unique<SpentSearch>("hybrid");
  return std::make_unique<HybridSearch>(setup, *budget, knobs);
}

}  // namespace internal
}  // namespace kiln
