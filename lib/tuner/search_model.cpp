// Model-based search: a random first round, then every round fits a small
// random forest to everything measured so far (log time; a failed config
// counts as twice as slow as the slowest that worked, so failure regions are
// learnt and avoided) and proposes the unmeasured configs with the lowest
// lower confidence bound (mean minus kappa times the spread over trees):
// confident fast regions first, uncertain ones while kappa is still high.
// Parameters are ordered axes (numbers by value, booleans 0/1, strings by
// their position in the list), which is what trees split on.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <unordered_set>

#include "kiln/tuner/search.hpp"
#include "search_internal.hpp"

namespace kiln {
namespace {

using Row = std::vector<double>;

// One regression tree over rows, grown on a bootstrap sample.
class Tree {
 public:
  void fit(const std::vector<Row>& x, const std::vector<double>& y, std::vector<std::size_t> rows,
           std::mt19937_64& rng) {
    nodes_.clear();
    grow(x, y, rows, 0, rng);
  }
  double predict(const Row& r) const {
    std::size_t i = 0;
    while (nodes_[i].feature >= 0)
      i = r[static_cast<std::size_t>(nodes_[i].feature)] <= nodes_[i].threshold ? nodes_[i].left
                                                                                : nodes_[i].right;
    return nodes_[i].value;
  }

 private:
  struct Node {
    int feature = -1;  // -1: a leaf
    double threshold = 0, value = 0;
    std::size_t left = 0, right = 0;
  };

  std::size_t grow(const std::vector<Row>& x, const std::vector<double>& y,
                   std::vector<std::size_t>& rows, int depth, std::mt19937_64& rng) {
    const std::size_t at = nodes_.size();
    nodes_.push_back({});
    double mean = 0;
    for (auto r : rows) mean += y[r];
    mean /= static_cast<double>(rows.size());
    nodes_[at].value = mean;
    if (rows.size() < 4 || depth >= 12) return at;
    // The best split over a random half of the features: least squared error.
    const std::size_t d = x[0].size();
    std::vector<std::size_t> features(d);
    std::iota(features.begin(), features.end(), 0);
    std::shuffle(features.begin(), features.end(), rng);
    features.resize(std::max<std::size_t>(1, (d + 1) / 2));
    double best_score = 0;
    int best_feature = -1;
    double best_threshold = 0;
    double total = 0, total_sq = 0;
    for (auto r : rows) {
      total += y[r];
      total_sq += y[r] * y[r];
    }
    const double base = total_sq - total * total / static_cast<double>(rows.size());
    for (std::size_t f : features) {
      std::sort(rows.begin(), rows.end(), [&](auto a, auto b) { return x[a][f] < x[b][f]; });
      double left = 0, left_sq = 0;
      for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
        left += y[rows[i]];
        left_sq += y[rows[i]] * y[rows[i]];
        if (x[rows[i]][f] == x[rows[i + 1]][f]) continue;
        const double nl = static_cast<double>(i + 1), nr = static_cast<double>(rows.size()) - nl;
        const double right = total - left, right_sq = total_sq - left_sq;
        const double sse = (left_sq - left * left / nl) + (right_sq - right * right / nr);
        if (base - sse > best_score + 1e-12) {
          best_score = base - sse;
          best_feature = static_cast<int>(f);
          best_threshold = (x[rows[i]][f] + x[rows[i + 1]][f]) / 2;
        }
      }
    }
    if (best_feature < 0) return at;
    std::vector<std::size_t> lo, hi;
    for (auto r : rows)
      (x[r][static_cast<std::size_t>(best_feature)] <= best_threshold ? lo : hi).push_back(r);
    nodes_[at].feature = best_feature;
    nodes_[at].threshold = best_threshold;
    const std::size_t l = grow(x, y, lo, depth + 1, rng);
    const std::size_t h = grow(x, y, hi, depth + 1, rng);
    nodes_[at].left = l;
    nodes_[at].right = h;
    return at;
  }

  std::vector<Node> nodes_;
};

class ModelSearch final : public internal::BudgetedSearch {
 public:
  // A first round large enough for the forest to see each parameter move,
  // small enough to leave most of a small budget to the model.
  explicit ModelSearch(const SearchSetup& setup)
      : BudgetedSearch(
            setup, std::clamp<std::size_t>(setup.max_configs ? setup.max_configs / 8 : 12, 8, 12)) {
    if (setup.default_measured) skip_ = setup.start.key();
    // Score every config when the space can be listed; else a fresh sample each round.
    if (setup.space->cartesian_size() <= 500'000) pool_ = setup.space->enumerate();
  }
  const char* name() const override { return "model"; }

  std::vector<Config> propose(std::size_t n) override {
    if (ok_count() < 3) return {};  // nothing to learn from yet: random
    return ranked(n);
  }

  void report(const Config& config, std::optional<double> seconds) override {
    if (config.key() == skip_ && !seconds) return;
    seen_.push_back({config, seconds ? std::optional<double>(std::log(*seconds)) : std::nullopt});
  }

 private:
  struct Seen {
    Config config;
    std::optional<double> log_time;
  };

  std::size_t ok_count() const {
    return static_cast<std::size_t>(std::count_if(
        seen_.begin(), seen_.end(), [](const Seen& s) { return s.log_time.has_value(); }));
  }

  Row encode(const Config& c) const {
    Row r;
    for (const Parameter& p : sampler().space().parameters()) {
      const Value& v = c.at(p.name);
      if (const auto* i = std::get_if<std::int64_t>(&v)) {
        r.push_back(static_cast<double>(*i));
      } else if (const auto* b = std::get_if<bool>(&v)) {
        r.push_back(*b ? 1.0 : 0.0);
      } else {
        r.push_back(
            static_cast<double>(std::find(p.values.begin(), p.values.end(), v) - p.values.begin()));
      }
    }
    return r;
  }

  // The `n` unmeasured configs the forest rates best.
  std::vector<Config> ranked(std::size_t n) {
    std::vector<Row> x;
    std::vector<double> y;
    double worst = -1e300;
    for (const Seen& s : seen_)
      if (s.log_time) worst = std::max(worst, *s.log_time);
    for (const Seen& s : seen_) {
      x.push_back(encode(s.config));
      y.push_back(s.log_time ? *s.log_time : worst + std::log(2.0));
    }
    std::mt19937_64& rng = sampler().rng();
    std::vector<Tree> forest(kTrees);
    for (Tree& t : forest) {
      std::vector<std::size_t> rows(x.size());
      std::uniform_int_distribution<std::size_t> pick(0, x.size() - 1);
      for (auto& r : rows) r = pick(rng);
      t.fit(x, y, rows, rng);
    }
    std::vector<Config> candidates;
    if (!pool_.empty()) {
      candidates = pool_;
    } else {
      for (int i = 0; i < 4000; ++i) {
        Config c = sampler().space().config_at(std::uniform_int_distribution<std::uint64_t>(
            0, sampler().space().cartesian_size() - 1)(rng));
        if (sampler().space().contains(c)) candidates.push_back(std::move(c));
      }
    }
    // Kappa falls from 2 to 0.5 over the budget: explore, then exploit.
    const double progress =
        budget() ? static_cast<double>(proposed()) / static_cast<double>(budget()) : 0.5;
    const double kappa = 2.0 - 1.5 * progress;
    std::vector<std::pair<double, std::size_t>> scored;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (sampler().taken(candidates[i])) continue;
      const Row r = encode(candidates[i]);
      double sum = 0, sum_sq = 0;
      for (const Tree& t : forest) {
        const double p = t.predict(r);
        sum += p;
        sum_sq += p * p;
      }
      const double mean = sum / kTrees;
      const double spread = std::sqrt(std::max(0.0, sum_sq / kTrees - mean * mean));
      scored.push_back({mean - kappa * spread, i});
    }
    std::vector<Config> out;
    // Most of the round refines around the best config so far: its unmeasured
    // neighbours (one parameter one or two steps along its list) that the
    // forest rates fastest. A sharp optimum is found by climbing to it.
    std::vector<std::pair<double, Config>> near;
    for (Config& c : neighbours(best_config())) {
      if (sampler().taken(c)) continue;
      const Row r = encode(c);
      double sum = 0;
      for (const Tree& t : forest) sum += t.predict(r);
      near.push_back({sum / kTrees, std::move(c)});
    }
    std::sort(near.begin(), near.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [score, c] : near) {
      if (static_cast<double>(out.size()) >= near_share_ * static_cast<double>(n)) break;
      sampler().mark(c);
      out.push_back(std::move(c));
    }
    // The rest: the lowest lower confidence bounds over the whole space.
    std::sort(scored.begin(), scored.end());
    for (const auto& [score, i] : scored) {
      if (out.size() >= n) break;
      if (!sampler().mark(candidates[i])) continue;  // taken by the refinement above
      out.push_back(candidates[i]);
    }
    return out;
  }

  Config best_config() const {
    const Seen* best = nullptr;
    for (const Seen& s : seen_)
      if (s.log_time && (!best || *s.log_time < *best->log_time)) best = &s;
    return best->config;
  }

  // Configs one parameter away from `c`: one or two steps along its list.
  std::vector<Config> neighbours(const Config& c) const {
    std::vector<Config> out = internal::neighbours_at(sampler().space(), c, 1);
    for (Config& n : internal::neighbours_at(sampler().space(), c, 2)) out.push_back(std::move(n));
    return out;
  }

  static constexpr int kTrees = 16;
  double near_share_ = 0.75;  // of each round, spent around the best so far
  std::string skip_;
  std::vector<Config> pool_;
  std::vector<Seen> seen_;
};

}  // namespace

namespace internal {

SearchStrategyInfo model_strategy() {
  return steered_strategy<ModelSearch>(
      "model",
      "a random start, then a random forest fitted to every measurement (failures included) "
      "proposes the configs it rates best (rounds)",
      64);
}

}  // namespace internal
}  // namespace kiln
