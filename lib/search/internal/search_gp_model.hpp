// A Gaussian process over a config space's parameter values, the model of
// the "gp" search (search_gp.cpp).
//
// Two configs are alike by the values they share and by how close their
// ordered values lie:
//   k(a, b) = exp(-theta * (codes of a and b that differ)
//                 - lambda * (sum of squared differences of coords))
// Codes are categorical (a parameter's value; derived ones such as "is a
// power of two"); coords are positions along ordered axes, in [0, 1]. With
// lambda 0 the model is purely categorical: a block shape fast with three
// tiles is expected fast with a fourth, which a forest, splitting on one
// value at a time, learns only once it has seen that pair. With lambda > 0
// it also expects a trend to go on along an axis (a faster config one tile
// further along), which is what a space whose optimum sits at an edge needs.
// theta, lambda and the noise are chosen on a small grid by the marginal
// likelihood: a handful of hyperparameters, fitted from a few dozen
// measurements without a gradient to go astray.
// Private to the tuner: rows in, a mean and a standard deviation out.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kiln::internal {

struct GpRow {
  std::vector<std::int32_t> codes;  // alike when equal
  std::vector<double> coords;       // alike when close, each in [0, 1]
};

// Rows laid out flat, one after another: the kernel values of one row
// against many (GpSearch's candidates against its measured rows, the most
// of a long search's time) then run over contiguous memory.
class GpRowTable {
 public:
  void push_back(const GpRow& row);
  void clear();
  std::size_t size() const { return rows_; }

 private:
  friend class CategoricalGp;
  std::size_t rows_ = 0, codes_per_row_ = 0, coords_per_row_ = 0;
  std::vector<std::int32_t> codes_;
  std::vector<double> coords_;
};

struct GpHyper {
  double theta = 0.2, lambda = 0, noise = 1e-2;  // noise: of the standardised targets
  bool operator==(const GpHyper&) const = default;
};

class CategoricalGp {
 public:
  // Chooses the hyperparameters on the grid, then conditions on (x, y).
  // Lower y is better, any scale (standardised here). `x` must be
  // non-empty, its rows of one shape.
  void fit(const std::vector<GpRow>& x, const std::vector<double>& y);
  // Conditions on (x, y) with the hyperparameters of the last fit (or the
  // defaults): a refit without the grid search.
  void condition(const std::vector<GpRow>& x, const std::vector<double>& y);

  struct Posterior {
    double mean = 0, sd = 0;  // standardised units
  };
  Posterior predict(const GpRow& row) const;
  // The posterior mean and an upper bound on the sd: n kernel
  // evaluations, no solve.
  Posterior predict_bound(const GpRow& row) const;
  // The same from the row's kernel values against the rows conditioned on,
  // in their order (`k.size()` of them): a caller that keeps them between
  // picks saves the kernel evaluations, most of a pick's cost.
  Posterior predict_from(std::vector<double> k) const;
  // The forward solve behind predict_from: extends `v`, L^-1 k over the
  // first v.size() rows conditioned on, to k.size() rows (n per row). Rows
  // conditioned on keep their factor rows while the hyperparameters stay
  // (condition()), so a caller may keep v between picks, as kernel values,
  // and pay for the new rows alone.
  void solve_more(std::span<const double> k, std::vector<double>& v) const;
  // The posterior from k and its solved v = L^-1 k: what predict_from
  // returns, bit for bit, without the n^2 solve.
  Posterior predict_solved(std::span<const double> k, std::span<const double> v) const;
  // `head` then `tail`: the values against the first rows, then the rest.
  Posterior bound_from(std::span<const double> head, std::span<const double> tail = {}) const;
  // bound_from(heads[c], tails[c]) into out[c] for every c: the same values,
  // bit for bit. Each candidate's sum runs in bound_from's order, but
  // several candidates' sums run side by side, so the additions of one
  // candidate's long chain (one per row conditioned on) no longer wait on
  // each other: that chain's latency was most of a long search's bound pass.
  void bounds_from(std::span<const std::span<const double>> heads,
                   std::span<const std::span<const double>> tails, Posterior* out) const;
  // The kernel between two rows at the current hyperparameters (noise aside).
  double covariance(const GpRow& a, const GpRow& b) const { return kernel(a, b, hyper_); }
  // covariance(a, row) for rows [from, to) of `rows`, into out[0..to-from):
  // the same values, bit for bit.
  void covariances(const GpRow& a, const GpRowTable& rows, std::size_t from, std::size_t to,
                   double* out) const;
  // Expected improvement below the lowest y conditioned on, standardised;
  // increasing in both -mean and sd.
  double expected_improvement(double mean, double sd) const;
  // A standardised value back in y's units.
  double to_y(double standardised) const { return standardised * scale_ + offset_; }
  // y's units per standardised unit.
  double scale() const { return scale_; }
  // Expected improvement measured from `y` (y's units) instead of the lowest
  // y conditioned on: where y are what is left of the targets after a prior
  // mean (gp's prior from other devices), from the lowest target.
  void set_best_y(double y) { best_ = (y - offset_) / scale_; }
  const GpHyper& hyper() const { return hyper_; }
  // How many times the factor was computed whole (n^3) rather than
  // extended row by row: once per fit, and again only where rows differ
  // from those conditioned on before or a row would not factor.
  std::size_t whole_factors() const { return whole_factors_; }

 private:
  double kernel(const GpRow& a, const GpRow& b, const GpHyper& h) const;
  // The kernel from the codes differing (d) and, with a trend, the squared
  // distance: kernel() and covariances() both end here.
  double kernel_of(std::size_t d, double squared, const GpHyper& h) const {
    if (h.lambda == 0 && h.theta == tabled_theta_ && d < tabled_.size()) return tabled_[d];
    double e = h.theta * static_cast<double>(d);
    if (h.lambda > 0) e += h.lambda * squared;
    return std::exp(-e);
  }
  // The lower Cholesky factor of K + noise I into chol_; false when K is
  // not positive definite at these hyperparameters.
  bool factor(const GpHyper& h);
  // Row i of the factor from rows 0..i-1 (n^2); false when not positive definite.
  bool append(std::size_t i);
  void standardise(const std::vector<double>& y);
  // bound_from's posterior from its sum and the nearest row's kernel value.
  Posterior bounded(double mean, double nearest) const;

  GpHyper hyper_;
  bool factored_ = false;  // chol_ holds x_'s factor at factored_hyper_
  GpHyper factored_hyper_;
  std::vector<GpRow> x_;
  std::vector<double> z_;      // y standardised
  std::vector<double> alpha_;  // (K + noise I)^-1 z
  std::vector<double> chol_;   // lower, row-major, rows stride_ apart
  std::size_t stride_ = 0;
  std::size_t whole_factors_ = 0;  // chol_ is stride_ x stride_, stride_ >= x_.size()
  double offset_ = 0, scale_ = 1, best_ = 0;
  // exp(-theta d) for d = 0..codes at the fitted theta: without a trend
  // (lambda 0) a kernel value depends on the codes differing alone, and the
  // exp was a third of a long search's time (the same expression, so the
  // same bits as computing it).
  double tabled_theta_ = -1;
  std::vector<double> tabled_;
};

}  // namespace kiln::internal
