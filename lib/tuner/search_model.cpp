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
    for (const Config& c : pool_) {
      pool_rows_.push_back(encode(c));
      pool_index_.push_back(sampler().index(c));
    }
  }
  const char* name() const override { return "model"; }

  std::vector<Config> propose(std::size_t n) override {
    if (ok_count() < 3) return {};  // nothing to learn from yet: random
    return ranked(n);
  }

  void report(const Config& config, std::optional<double> seconds) override {
    if (config.key() == skip_ && !seconds) return;
    seen_.push_back({config, seconds ? std::optional<double>(std::log(*seconds)) : std::nullopt,
                     encode(config)});
  }

 private:
  struct Seen {
    Config config;
    std::optional<double> log_time;
    Row row;  // encode(config), once: a fit reads every one
  };

  std::size_t ok_count() const {
    return static_cast<std::size_t>(std::count_if(
        seen_.begin(), seen_.end(), [](const Seen& s) { return s.log_time.has_value(); }));
  }

  Row encode(const Config& c) const {
    Row r;
    for (const Parameter& p : sampler().space().parameters()) {
      const Value& v = c.at(p.name);
      r.push_back(coordinate(p, v, [&] { return std::find(p.values.begin(), p.values.end(), v); }));
    }
    return r;
  }

  // The same for the config at `index` of the cartesian product, from its
  // digits: no lookups by name, for a pick's thousands of drawn candidates.
  Row encode_at(std::uint64_t index) const {
    const std::vector<Parameter>& params = sampler().space().parameters();
    Row r(params.size());
    for (std::size_t k = params.size(); k-- > 0;) {  // the last parameter varies fastest
      const Parameter& p = params[k];
      const auto at = p.values.begin() + static_cast<std::ptrdiff_t>(index % p.values.size());
      index /= p.values.size();
      r[k] = coordinate(p, *at, [&] { return at; });
    }
    return r;
  }

  // A value's place on its axis: numbers by value, booleans 0/1, the rest
  // by their position in the list (`where`, asked only then).
  template <class Where>
  static double coordinate(const Parameter& p, const Value& v, Where where) {
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    if (const auto* b = std::get_if<bool>(&v)) return *b ? 1.0 : 0.0;
    return static_cast<double>(where() - p.values.begin());
  }

  // NOTES: the cost of a long run. The forest was refitted on every
  // measurement at every ask, and every listed config scored, so a run was
  // quadratic in its length: with a config proposed as each result lands,
  // a 10% budget of a 100,000-config space would take hours. Up to
  // kFitWhole measurements (past every run measured before, which pick as
  // before) that is kept; past it the forest is fitted on a bounded subset
  // of them (internal::bounded_rows: the fastest, the latest, the rest
  // spread), and again only once they grew by a sixteenth. A pick scores at
  // most kScored configs, a random subset of a larger space's.
  void fit_forest() {
    std::vector<Row> x;
    std::vector<double> y;
    double worst = -1e300;
    for (const Seen& s : seen_)
      if (s.log_time) worst = std::max(worst, *s.log_time);
    for (const Seen& s : seen_) {
      x.push_back(s.row);
      y.push_back(s.log_time ? *s.log_time : worst + std::log(2.0));
    }
    if (x.size() > kFitWhole) {
      const std::vector<std::size_t> keep =
          internal::bounded_rows_of(y, kFitBest, kFitSpread, kFitRecent);
      std::vector<Row> kx;
      std::vector<double> ky;
      for (std::size_t i : keep) {
        kx.push_back(std::move(x[i]));
        ky.push_back(y[i]);
      }
      x = std::move(kx);
      y = std::move(ky);
    }
    std::mt19937_64& rng = sampler().rng();
    forest_.assign(static_cast<std::size_t>(kTrees), Tree{});
    for (Tree& t : forest_) {
      std::vector<std::size_t> rows(x.size());
      std::uniform_int_distribution<std::size_t> pick(0, x.size() - 1);
      for (auto& r : rows) r = pick(rng);
      t.fit(x, y, rows, rng);
    }
    fitted_at_ = seen_.size();
  }

  // The `n` unmeasured configs the forest rates best.
  std::vector<Config> ranked(std::size_t n) {
    if (seen_.size() <= kFitWhole || forest_.empty() ||
        seen_.size() >= fitted_at_ + fitted_at_ / kRefitGrowth)
      fit_forest();
    const std::vector<Tree>& forest = forest_;
    std::mt19937_64& rng = sampler().rng();
    // Each candidate as its config, encoded row and a number that orders
    // ties (its place in the pool, or in this pick's draw).
    std::vector<Config> drawn;
    std::vector<Row> drawn_rows;
    std::vector<std::size_t> candidates;  // into pool_, or into drawn
    if (!pool_.empty()) {
      for (std::size_t i = 0; i < pool_.size(); ++i)
        if (!sampler().taken_at(pool_index_[i])) candidates.push_back(i);
      if (candidates.size() > kScored) {
        std::shuffle(candidates.begin(), candidates.end(), rng);
        candidates.resize(kScored);
        std::sort(candidates.begin(), candidates.end());
      }
    } else if (const std::vector<Config>* listed = sampler().listed(); listed && !listed->empty()) {
      // Uniform over the space's configs, as the draws by index below are,
      // without asking the space which of 4,000 indices it holds (a few
      // dozen, in the hub's hotspot space).
      std::uniform_int_distribution<std::size_t> pick(0, listed->size() - 1);
      for (int k = 0; k < 4000; ++k) {
        const std::size_t i = pick(rng);
        const std::uint64_t at = sampler().listed_index(i);
        if (sampler().taken_at(at)) continue;
        drawn.push_back((*listed)[i]);
        drawn_rows.push_back(encode_at(at));
      }
    } else {
      for (int i = 0; i < 4000; ++i) {
        Config c = sampler().space().config_at(std::uniform_int_distribution<std::uint64_t>(
            0, sampler().space().cartesian_size() - 1)(rng));
        if (sampler().space().contains(c) && !sampler().taken(c)) drawn.push_back(std::move(c));
      }
    }
    if (pool_.empty()) {
      for (std::size_t i = drawn_rows.size(); i < drawn.size(); ++i)
        drawn_rows.push_back(encode(drawn[i]));
      candidates.resize(drawn.size());
      std::iota(candidates.begin(), candidates.end(), std::size_t{0});
    }
    const std::vector<Config>& configs = pool_.empty() ? drawn : pool_;
    const std::vector<Row>& rows = pool_.empty() ? drawn_rows : pool_rows_;
    // Kappa falls from 2 to 0.5 over the budget: explore, then exploit.
    const double progress =
        budget() ? static_cast<double>(proposed()) / static_cast<double>(budget()) : 0.5;
    const double kappa = 2.0 - 1.5 * progress;
    std::vector<std::pair<double, std::size_t>> scored;
    for (std::size_t i : candidates) {
      const Row& r = rows[i];
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
      if (!sampler().mark(configs[i])) continue;  // taken by the refinement above
      out.push_back(configs[i]);
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
  static constexpr std::size_t kFitWhole = 2048;  // measurements fitted whole, at most
  static constexpr std::size_t kFitBest = 1024, kFitSpread = 512, kFitRecent = 512;
  static constexpr std::size_t kRefitGrowth = 16;  // past kFitWhole: refit once grown 1/16
  static constexpr std::size_t kScored = 16384;    // configs a pick scores, at most
  double near_share_ = 0.75;                       // of each round, spent around the best so far
  std::string skip_;
  std::vector<Config> pool_;
  std::vector<Row> pool_rows_;
  std::vector<std::uint64_t> pool_index_;  // each one's UniqueSampler::index()
  std::vector<Tree> forest_;
  std::size_t fitted_at_ = 0;  // seen_.size() at the last fit
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
