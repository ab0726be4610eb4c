// A small random forest regressor for the model-based search (search_bayes.cpp):
// bootstrap-sampled regression trees, each split the least squared error over
// a random subset of the features. The spread of the trees' predictions is
// the model's uncertainty, which the acquisition trades against the mean.
// Private to the tuner: rows of doubles in, a mean and a spread out.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace kiln::internal {

using FeatureRow = std::vector<double>;

struct ForestOptions {
  std::size_t trees = 48;
  std::size_t max_depth = 20;
  std::size_t min_leaf = 1;
  // Features tried at each split; 0: all of them (the bootstrap alone
  // decorrelates the trees; small spaces have few features to spare).
  std::size_t features_per_split = 0;
};

struct Prediction {
  double mean = 0;
  double spread = 0;  // standard deviation over the trees
};

class RegressionTree {
 public:
  // Grows the tree on `rows` of (x, y); `rows` may repeat (a bootstrap).
  void fit(const std::vector<FeatureRow>& x, const std::vector<double>& y,
           std::vector<std::size_t> rows, const ForestOptions& options, std::mt19937_64& rng);
  double predict(const FeatureRow& row) const;

 private:
  struct Node {
    int feature = -1;  // -1: a leaf
    double threshold = 0, value = 0;
    std::size_t left = 0, right = 0;
  };
  std::size_t grow(const std::vector<FeatureRow>& x, const std::vector<double>& y,
                   std::vector<std::size_t>& rows, std::size_t depth, const ForestOptions& options,
                   std::mt19937_64& rng);
  std::vector<Node> nodes_;
};

class RandomForest {
 public:
  explicit RandomForest(ForestOptions options = {}) : options_(options) {}
  // Fits every tree on its own bootstrap sample; deterministic for `rng`'s state.
  // `x` must be non-empty and its rows of one length.
  void fit(const std::vector<FeatureRow>& x, const std::vector<double>& y, std::mt19937_64& rng);
  Prediction predict(const FeatureRow& row) const;
  std::size_t size() const { return trees_.size(); }
  const RegressionTree& tree(std::size_t i) const { return trees_[i]; }

 private:
  ForestOptions options_;
  std::vector<RegressionTree> trees_;
};

}  // namespace kiln::internal
