// Bayesian-style model-based search, the opening of Kiln's default for
// spaces larger than the budget (hybrid, search_hybrid.cpp):
//  (1) a space-filling start of 8 configs: each the farthest from those
//      already picked among a few random candidates, so the first model
//      sees every parameter move;
//  (2) then every round fits a random forest (search_forest.hpp) to every
//      measurement so far and proposes the unmeasured configs with the
//      lowest lower confidence bound, mean - kappa x spread over the trees,
//      kappa falling from 2 to 0.5 over the budget (explore, then exploit);
//  (3) a quarter of each round refines around the best config so far: its
//      unmeasured one-parameter neighbours (any other value of one
//      parameter) the forest rates fastest, which climbs a sharp optimum;
//      once all of them are measured, around the next fastest that still
//      has unmeasured neighbours;
//  (4) one proposal in kRandomEvery is a uniform random config, so a
//      region the forest wrote off early still gets looked at;
//  (5) while the model is young (the first tenth of the budget), a round's
//      lower-bound picks differ from one another, and from the round's
//      local picks, in at least kApart parameters: the forest's next few are
//      often neighbours in one region, and a round spent there tells the
//      next fit little about the others, where several regions tested at
//      once tell it which one to climb.
// What the forest learns is each config's speed relative to the best so
// far (best / time, in 0..1; negated, lower is better): slow configs,
// however slow, and failures (0: no speed at all) weigh alike, so the trees
// split on what separates fast from slow rather than on the slow tail, and
// a failing region is learnt and avoided like a slow one.
// Features: integers as numbers (log2 when every value is a power of two),
// plus, when they are not all powers of two, the power of two dividing the
// value and whether it is one (GPU kernels care about alignment: a block of
// 192 threads is not a block of 128 or 256); booleans 0/1; strings by
// position, and one-hot when a parameter has more than two; and for each
// pair of positive integer parameters of more than two values, the log2 of
// their product.
#include <algorithm>
#include <bit>
#include <cmath>
#include <unordered_map>

#include "kiln/search/search.hpp"
#include "search/internal/search_forest.hpp"
#include "search/internal/search_internal.hpp"

namespace kiln {
namespace {

using internal::FeatureRow;

constexpr std::size_t kRandomEvery = 16;          // of the model's proposals, one is random
constexpr double kLocalShare = 0.25;              // of each round, near the best so far
constexpr std::size_t kSpaceFillCandidates = 20;  // random candidates per space-filling pick
constexpr std::uint64_t kPoolLimit = 500'000;     // enumerate spaces up to this cartesian size
constexpr int kSampledCandidates = 4000;          // else: candidates drawn per fit
constexpr std::size_t kMaxProducts = 66;          // product features: the pairs of 12 parameters
constexpr std::size_t kFirstRound = 8;            // (1): the space-filling start
constexpr std::size_t kApart = 3;                 // (5): parameters a young round's picks differ in
constexpr double kApartUntil = 0.1;               // (5): of the budget
constexpr std::size_t kFitWhole = 2048;  // measurements a forest is fitted on whole, at most
constexpr std::size_t kFitBest = 1024, kFitSpread = 512, kFitRecent = 512;  // past it, on these

// Parameter -> features, fixed for the space.
class Encoder {
 public:
  explicit Encoder(const ConfigSpace& space) {
    for (const Parameter& p : space.parameters()) {
      Axis a{&p};
      if (p.values.size() < 2) continue;  // a constant tells the model nothing
      if (p.type == ValueType::kInt) {
        bool positive = true, all_pow2 = true;
        for (const Value& v : p.values) {
          const std::int64_t i = std::get<std::int64_t>(v);
          positive = positive && i > 0;
          all_pow2 = all_pow2 && i > 0 && std::has_single_bit(static_cast<std::uint64_t>(i));
        }
        a.log2 = all_pow2 && p.values.size() > 2;
        a.product = positive && p.values.size() > 2;
        a.alignment = positive && !all_pow2;
      }
      a.one_hot = p.type == ValueType::kString && p.values.size() > 2;
      axes_.push_back(a);
    }
  }

  FeatureRow encode(const Config& c) const {
    FeatureRow r;
    std::vector<double> logs;  // of the product axes, for the pair features below
    for (const Axis& a : axes_) {
      const Value& v = c.at(a.param->name);
      const auto position = static_cast<std::size_t>(
          std::find(a.param->values.begin(), a.param->values.end(), v) - a.param->values.begin());
      if (const auto* i = std::get_if<std::int64_t>(&v)) {
        const auto x = static_cast<double>(*i);
        r.push_back(a.log2 ? std::log2(x) : x);
        if (a.product) logs.push_back(std::log2(x));
        if (a.alignment) {
          const auto u = static_cast<std::uint64_t>(*i);
          r.push_back(static_cast<double>(std::countr_zero(u)));
          r.push_back(std::has_single_bit(u) ? 1.0 : 0.0);
        }
      } else if (const auto* b = std::get_if<bool>(&v)) {
        r.push_back(*b ? 1.0 : 0.0);
      } else {
        r.push_back(static_cast<double>(position));
        if (a.one_hot)
          for (std::size_t k = 0; k < a.param->values.size(); ++k)
            r.push_back(k == position ? 1.0 : 0.0);
      }
    }
    // Products of integer parameters, log2(a * b), one feature per pair:
    // what a kernel's speed follows is often a product (threads per block
    // = x * y, a thread's tile = tx * ty, a block's tile = x * tx), and a
    // tree sees a product of two axes only as a staircase of splits; as
    // one feature it is one split.
    std::size_t pairs = 0;
    for (std::size_t i = 0; i < logs.size(); ++i)
      for (std::size_t j = i + 1; j < logs.size() && pairs < kMaxProducts; ++j, ++pairs)
        r.push_back(logs[i] + logs[j]);
    if (r.empty()) r.push_back(0);  // a one-config space: one constant feature
    return r;
  }

 private:
  struct Axis {
    const Parameter* param = nullptr;
    bool log2 = false, alignment = false, one_hot = false, product = false;
  };
  std::vector<Axis> axes_;
};

class BayesSearch final : public SearchStrategy {
  using Ranked = std::vector<std::pair<double, std::size_t>>::const_iterator;

 public:
  explicit BayesSearch(const SearchSetup& setup)
      : sampler_(*setup.space, setup.seed, setup.listed),
        encoder_(*setup.space),
        budget_(setup.max_configs) {
    if (setup.default_measured) sampler_.mark(setup.start);
    // (1)'s size: eight configs whatever the budget. A start that grew with
    // the budget (15% of it, up to 20) was all of a 10% run's first 0.5%,
    // where it did no better than random draws; with eight the model steers
    // from the ninth config on, better early and no worse later (measured:
    // docs/lab/search-models-journal.md, "bayes against the goal", the
    // start of 8).
    for (const Parameter& p : setup.space->parameters()) varying_ += p.values.size() > 1;
    first_round_ = kFirstRound;
    if (budget_) first_round_ = std::min(first_round_, budget_);
    if (setup.space->cartesian_size() <= kPoolLimit) {
      for (Config& c : setup.space->enumerate()) pool_.push_back({std::move(c), {}, {}, 0});
      for (Candidate& c : pool_) {
        c.features = encoder_.encode(c.config);
        c.index = sampler_.index(c.config);
      }
    }
  }
  const char* name() const override { return "bayes"; }
  bool steered() const override { return true; }
  std::size_t first_round() const override { return first_round_; }

  std::vector<Config> next(std::size_t max_batch) override {
    std::vector<Config> batch;
    if (budget_ && proposed_ >= budget_) return batch;
    if (budget_) max_batch = std::min(max_batch, budget_ - proposed_);
    // The maximin start is quadratic in what it has chosen: it stays the
    // first round's. Past it, with fewer than two successes to fit (every
    // proposal pruned or failing, an unbounded budget), random draws.
    if (proposed_ < first_round_) {
      batch = space_filling(std::min(max_batch, first_round_ - proposed_));
    } else if (ok_count_ >= 2) {
      batch = from_model(max_batch);
    }
    while (batch.size() < max_batch) {  // the model had nothing left: random
      std::optional<Config> c = sampler_.draw();
      if (!c) break;
      batch.push_back(std::move(*c));
    }
    proposed_ += batch.size();
    return batch;
  }

  void report(const Config& config, std::optional<double> seconds) override {
    if (seconds && *seconds > 0) {
      ++ok_count_;
      if (best_seconds_ == 0 || *seconds < best_seconds_) best_seconds_ = *seconds;
    }
    seen_configs_.push_back(config);
    seen_features_.push_back(encoder_.encode(config));
    seen_seconds_.push_back(seconds && *seconds > 0 ? *seconds : 0);
  }

 private:
  struct Candidate {
    Config config;
    FeatureRow features;
    internal::Prediction predicted;
    // The config's place in the cartesian product: whether it is taken is
    // then one set lookup, not a lookup of each parameter's value by name
    // (a fifth of a replay's time under ASan).
    std::uint64_t index;
  };

  // (1) Greedy maximin over normalised value positions.
  std::vector<Config> space_filling(std::size_t n) {
    std::vector<Config> out;
    while (out.size() < n) {
      std::optional<Config> best;
      double best_distance = -1;
      const std::size_t tries = chosen_.empty() ? 1 : kSpaceFillCandidates;
      for (std::size_t k = 0; k < tries; ++k) {
        std::optional<Config> c = random_unmarked();
        if (!c) break;
        double nearest = 1e300;
        for (const Config& o : chosen_) nearest = std::min(nearest, distance(*c, o));
        if (nearest > best_distance) {
          best_distance = nearest;
          best = std::move(c);
        }
      }
      if (!best) break;
      sampler_.mark(*best);
      chosen_.push_back(*best);
      out.push_back(std::move(*best));
    }
    return out;
  }

  // A valid config neither proposed nor marked, without marking it.
  std::optional<Config> random_unmarked() {
    const ConfigSpace& space = sampler_.space();
    std::uniform_int_distribution<std::uint64_t> pick(0, space.cartesian_size() - 1);
    for (int attempt = 0; attempt < 10000; ++attempt) {
      Config c = space.config_at(pick(sampler_.rng()));
      if (!sampler_.taken(c) && space.contains(c)) return c;
    }
    return std::nullopt;
  }

  double distance(const Config& a, const Config& b) const {
    double d = 0;
    for (const Parameter& p : sampler_.space().parameters()) {
      if (p.values.size() < 2) continue;
      auto at = [&](const Config& c) {
        return std::find(p.values.begin(), p.values.end(), c.at(p.name)) - p.values.begin();
      };
      d += std::abs(static_cast<double>(at(a) - at(b))) / static_cast<double>(p.values.size() - 1);
    }
    return d;
  }

  // (2)-(4).
  std::vector<Config> from_model(std::size_t n) {
    // Refit once the data grew by a sixteenth (every round while it is
    // small); in between, the next best of the last ranking is as good.
    if (!fitted_ ||
        seen_seconds_.size() >= fitted_at_ + std::max<std::size_t>(1, seen_seconds_.size() / 16))
      fit();
    std::vector<Config> out;
    // (3) Near the best so far.
    const auto local = static_cast<std::size_t>(std::lround(kLocalShare * static_cast<double>(n)));
    std::vector<std::pair<double, Config>> near;
    for (Config& c : neighbours_of_fastest()) {
      const double mean = forest_.predict(encoder_.encode(c)).mean;
      near.push_back({mean, std::move(c)});
    }
    std::stable_sort(near.begin(), near.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [mean, c] : near) {
      if (out.size() >= local) break;
      if (sampler_.mark(c)) out.push_back(std::move(c));
    }
    // (2) The lowest lower confidence bounds, (4) with a random one now and then.
    const double progress =
        budget_ ? static_cast<double>(proposed_) / static_cast<double>(budget_) : 0.5;
    const double kappa = 2.0 - 1.5 * std::min(1.0, progress);
    std::vector<std::pair<double, std::size_t>> ranked;
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      const internal::Prediction& p = candidates_[i]->predicted;
      ranked.push_back({p.mean - kappa * p.spread, i});
    }
    std::sort(ranked.begin(), ranked.end());
    // (5) Only where kApart parameters can differ with one to spare; with no
    // budget the run counts as half-way, as for kappa.
    const bool apart = budget_ && progress <= kApartUntil && varying_ > kApart;
    auto it = ranked.begin();
    while (out.size() < n) {
      if (++model_proposals_ % kRandomEvery == 0) {
        std::optional<Config> c = sampler_.draw();
        if (c) out.push_back(std::move(*c));
        continue;
      }
      while (it != ranked.end() && sampler_.taken_at(candidates_[it->second]->index)) ++it;
      if (it == ranked.end()) break;
      Ranked pick = it;
      if (apart) pick = first_apart(it, ranked.end(), out);
      sampler_.mark(candidates_[pick->second]->config);
      out.push_back(candidates_[pick->second]->config);
    }
    return out;
  }

  // (5) The best-ranked unmeasured candidate from `from` on that differs
  // from every config of `round` in at least kApart parameters; `from`
  // itself when none does. The whole ranking is looked through: a young
  // round's neighbourhoods can cover a thousand of the best-ranked, and a
  // cut-off there would pick inside them after all.
  Ranked first_apart(Ranked from, Ranked end, const std::vector<Config>& round) const {
    auto far_enough = [&](const Config& c) {
      for (const Config& o : round) {
        std::size_t differ = 0;
        for (const auto& [name, value] : c.values()) differ += o.at(name) != value;
        if (differ < kApart) return false;
      }
      return true;
    };
    for (Ranked r = from; r != end; ++r) {
      const Candidate& c = *candidates_[r->second];
      if (!sampler_.taken_at(c.index) && far_enough(c.config)) return r;
    }
    return from;
  }

  void fit() {
    std::vector<double> y;
    for (double s : seen_seconds_) y.push_back(s > 0 ? -best_seconds_ / s : 0.0);
    if (seen_seconds_.size() > kFitWhole) {
      const std::vector<std::size_t> rows = fit_rows(y);
      std::vector<FeatureRow> sx;
      std::vector<double> sy;
      for (std::size_t i : rows) {
        sx.push_back(seen_features_[i]);
        sy.push_back(y[i]);
      }
      forest_.fit(sx, sy, sampler_.rng());
    } else {
      forest_.fit(seen_features_, y, sampler_.rng());
    }
    fitted_ = true;
    fitted_at_ = seen_seconds_.size();
    if (!pool_.empty()) {
      candidates_.clear();
      for (Candidate& c : pool_)
        if (!sampler_.taken_at(c.index)) candidates_.push_back(&c);
    } else if (const std::vector<Config>* listed = sampler_.listed(); listed && !listed->empty()) {
      // Too large to list, but its configs are listed (a recorded space):
      // a fresh sample of them each fit, uniform as the draws by index
      // below are, which in the hub's hotspot space (2.4% of its cartesian
      // product) would find about a hundred.
      drawn_.clear();
      std::uniform_int_distribution<std::size_t> pick(0, listed->size() - 1);
      for (int k = 0; k < kSampledCandidates; ++k) {
        const std::size_t i = pick(sampler_.rng());
        const std::uint64_t index = sampler_.listed_index(i);
        if (!sampler_.taken_at(index))
          drawn_.push_back({(*listed)[i], encoder_.encode((*listed)[i]), {}, index});
      }
    } else {
      // Too large to list: a fresh sample each fit.
      drawn_.clear();
      const ConfigSpace& space = sampler_.space();
      std::uniform_int_distribution<std::uint64_t> pick(0, space.cartesian_size() - 1);
      for (int i = 0; i < kSampledCandidates; ++i) {
        const std::uint64_t index = pick(sampler_.rng());
        if (sampler_.taken_at(index)) continue;
        Config c = space.config_at(index);
        if (space.violated(c).empty()) {  // a member by construction: constraints only
          FeatureRow f = encoder_.encode(c);
          drawn_.push_back({std::move(c), std::move(f), {}, index});
        }
      }
    }
    if (pool_.empty()) {
      candidates_.clear();
      for (Candidate& c : drawn_) candidates_.push_back(&c);
    }
    for (Candidate* c : candidates_) c->predicted = forest_.predict(c->features);
  }

  // The measurements a forest is fitted on past kFitWhole, in report order:
  // the kFitBest fastest, kFitRecent latest and kFitSpread others spread
  // evenly over the run (failures among them). A tree's growth costs its
  // rows times their log times the features at each depth, and a forest
  // refitted at each sixteenth more over every measurement made a 10%
  // budget of a 100,000-config space (the hub's hotspot) cost hours
  // (docs/lab/search-cost-journal.md, "Spaces of 100,000 configs and
  // more"); what decides a pick is
  // where the fast configs are, which these keep. kFitWhole is past every
  // run measured before (up to 1,796 configs), which pick as before.
  std::vector<std::size_t> fit_rows(const std::vector<double>& y) const {
    return internal::bounded_rows_of(y, kFitBest, kFitSpread, kFitRecent);
  }

  // (3) The unmarked one-parameter neighbours of the fastest config
  // measured that has any.
  std::vector<Config> neighbours_of_fastest() const {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < seen_seconds_.size(); ++i)
      if (seen_seconds_[i] > 0) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return seen_seconds_[a] < seen_seconds_[b];
    });
    for (std::size_t i : order) {
      std::vector<Config> near = internal::untaken_neighbours(sampler_, seen_configs_[i]);
      if (!near.empty()) return near;
    }
    return {};
  }

  internal::UniqueSampler sampler_;
  Encoder encoder_;
  std::size_t budget_;
  std::size_t first_round_ = 0;
  std::size_t varying_ = 0;  // parameters of more than one value
  std::size_t proposed_ = 0;
  std::size_t model_proposals_ = 0;
  std::vector<Candidate> pool_;  // every config, when the space can be listed
  // Unmeasured, scored by the last fit: pool_'s, or a fit's draw in
  // drawn_. Pointers, not copies: copying and freeing a listed space's
  // thousands of configs at every fit was a tenth of a long search's time
  // (docs/lab/search-cost-journal.md, "The picks' bookkeeping").
  std::vector<Candidate*> candidates_;
  std::vector<Candidate> drawn_;
  std::vector<Config> chosen_;  // the space-filling start
  internal::RandomForest forest_;
  bool fitted_ = false;
  std::size_t fitted_at_ = 0;
  std::vector<Config> seen_configs_;
  std::vector<FeatureRow> seen_features_;
  std::vector<double> seen_seconds_;  // 0: failed
  std::size_t ok_count_ = 0;
  double best_seconds_ = 0;
};

}  // namespace

namespace internal {

SearchStrategyInfo bayes_strategy() {
  return steered_strategy<BayesSearch>(
      "bayes",
      "a space-filling start, then a random forest fitted to every measurement (failures "
      "included) proposes the configs with the lowest lower confidence bound, and refines around "
      "the best (rounds); hybrid's opening",
      64);
}

}  // namespace internal
}  // namespace kiln
