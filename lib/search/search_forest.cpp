// RandomForest: see search_forest.hpp.
#include "search/internal/search_forest.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kiln::internal {

void RegressionTree::fit(const std::vector<FeatureRow>& x, const std::vector<double>& y,
                         std::vector<std::size_t> rows, const ForestOptions& options,
                         std::mt19937_64& rng) {
  nodes_.clear();
  if (!rows.empty()) grow(x, y, rows, 0, options, rng);
}

double RegressionTree::predict(const FeatureRow& row) const {
  if (nodes_.empty()) return 0;
  std::size_t i = 0;
  while (nodes_[i].feature >= 0)
    i = row[static_cast<std::size_t>(nodes_[i].feature)] <= nodes_[i].threshold ? nodes_[i].left
                                                                                : nodes_[i].right;
  return nodes_[i].value;
}

std::size_t RegressionTree::grow(const std::vector<FeatureRow>& x, const std::vector<double>& y,
                                 std::vector<std::size_t>& rows, std::size_t depth,
                                 const ForestOptions& options, std::mt19937_64& rng) {
  const std::size_t at = nodes_.size();
  nodes_.push_back({});
  double total = 0, total_sq = 0;
  for (auto r : rows) {
    total += y[r];
    total_sq += y[r] * y[r];
  }
  const auto count = static_cast<double>(rows.size());
  nodes_[at].value = total / count;
  const double base = total_sq - total * total / count;
  if (rows.size() < 2 * options.min_leaf || depth >= options.max_depth || base < 1e-12) return at;
  // The split with the least squared error over a random subset of the
  // features (in a random order, so ties fall to no feature in particular).
  const std::size_t d = x[rows[0]].size();
  std::vector<std::size_t> features(d);
  std::iota(features.begin(), features.end(), 0);
  std::shuffle(features.begin(), features.end(), rng);
  if (options.features_per_split > 0 && options.features_per_split < d)
    features.resize(options.features_per_split);
  double best_gain = 1e-12;
  int best_feature = -1;
  double best_threshold = 0;
  for (std::size_t f : features) {
    std::sort(rows.begin(), rows.end(), [&](auto a, auto b) { return x[a][f] < x[b][f]; });
    double left = 0, left_sq = 0;
    for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
      left += y[rows[i]];
      left_sq += y[rows[i]] * y[rows[i]];
      if (x[rows[i]][f] == x[rows[i + 1]][f]) continue;
      const std::size_t n_left = i + 1, n_right = rows.size() - n_left;
      if (n_left < options.min_leaf || n_right < options.min_leaf) continue;
      const double nl = static_cast<double>(n_left), nr = static_cast<double>(n_right);
      const double right = total - left, right_sq = total_sq - left_sq;
      const double sse = (left_sq - left * left / nl) + (right_sq - right * right / nr);
      if (base - sse > best_gain) {
        best_gain = base - sse;
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
  const std::size_t l = grow(x, y, lo, depth + 1, options, rng);
  const std::size_t h = grow(x, y, hi, depth + 1, options, rng);
  nodes_[at].left = l;
  nodes_[at].right = h;
  return at;
}

void RandomForest::fit(const std::vector<FeatureRow>& x, const std::vector<double>& y,
                       std::mt19937_64& rng) {
  trees_.assign(std::max<std::size_t>(1, options_.trees), {});
  if (x.empty()) return;
  std::uniform_int_distribution<std::size_t> pick(0, x.size() - 1);
  for (RegressionTree& t : trees_) {
    std::vector<std::size_t> rows(x.size());
    for (auto& r : rows) r = pick(rng);
    t.fit(x, y, std::move(rows), options_, rng);
  }
}

Prediction RandomForest::predict(const FeatureRow& row) const {
  double sum = 0, sum_sq = 0;
  for (const RegressionTree& t : trees_) {
    const double p = t.predict(row);
    sum += p;
    sum_sq += p * p;
  }
  const auto n = static_cast<double>(trees_.size());
  Prediction out;
  out.mean = sum / n;
  out.spread = std::sqrt(std::max(0.0, sum_sq / n - out.mean * out.mean));
  return out;
}

}  // namespace kiln::internal
