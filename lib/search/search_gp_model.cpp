// CategoricalGp: see search_gp_model.hpp.
#include "search/internal/search_gp_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace kiln::internal {
namespace {

// The grid the marginal likelihood picks from. theta: from "a differing
// value barely matters" to "one differing value makes configs strangers";
// lambda 0 (no trend along axes) or a trend over a half or a quarter of an
// axis; the noise of log times measured on a real GPU.
constexpr double kThetas[] = {0.05, 0.1, 0.2, 0.3, 0.5, 1.0};
constexpr double kLambdas[] = {0, 1, 4};
constexpr double kNoises[] = {1e-3, 1e-2, 1e-1, 0.3};
constexpr std::size_t kFitRows = 128;

// Solves L z = b in place (L lower, row-major n x n, rows `stride` apart).
void solve_lower(const std::vector<double>& l, std::size_t n, std::size_t stride,
                 std::vector<double>& b) {
  for (std::size_t i = 0; i < n; ++i) {
    double s = b[i];
    const double* row = &l[i * stride];
    for (std::size_t k = 0; k < i; ++k) s -= row[k] * b[k];
    b[i] = s / row[i];
  }
}

// Solves L^T z = b in place.
void solve_upper(const std::vector<double>& l, std::size_t n, std::size_t stride,
                 std::vector<double>& b) {
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= l[k * stride + i] * b[k];
    b[i] = s / l[i * stride + i];
  }
}

// In-place Cholesky of the lower half of `a` (n x n, rows `stride` apart);
// false when not positive definite.
bool factor_lower(std::vector<double>& a, std::size_t n, std::size_t stride) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j * stride + j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j * stride + k] * a[j * stride + k];
    if (!(d > 0)) return false;
    const double root = std::sqrt(d);
    a[j * stride + j] = root;
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i * stride + j];
      for (std::size_t k = 0; k < j; ++k) s -= a[i * stride + k] * a[j * stride + k];
      a[i * stride + j] = s / root;
    }
  }
  return true;
}

std::size_t differing(const GpRow& a, const GpRow& b) {
  std::size_t d = 0;
  for (std::size_t p = 0; p < a.codes.size(); ++p) d += a.codes[p] != b.codes[p];
  return d;
}

double squared_distance(const GpRow& a, const GpRow& b) {
  double d = 0;
  for (std::size_t p = 0; p < a.coords.size(); ++p)
    d += (a.coords[p] - b.coords[p]) * (a.coords[p] - b.coords[p]);
  return d;
}

}  // namespace

double CategoricalGp::kernel(const GpRow& a, const GpRow& b, const GpHyper& h) const {
  return kernel_of(differing(a, b), h.lambda > 0 ? squared_distance(a, b) : 0.0, h);
}

void GpRowTable::push_back(const GpRow& row) {
  if (rows_ == 0) {
    codes_per_row_ = row.codes.size();
    coords_per_row_ = row.coords.size();
  }
  codes_.insert(codes_.end(), row.codes.begin(), row.codes.end());
  coords_.insert(coords_.end(), row.coords.begin(), row.coords.end());
  ++rows_;
}

void GpRowTable::clear() {
  rows_ = 0;
  codes_.clear();
  coords_.clear();
}

void CategoricalGp::covariances(const GpRow& a, const GpRowTable& rows, std::size_t from,
                                std::size_t to, double* out) const {
  const std::size_t nc = rows.codes_per_row_, nx = rows.coords_per_row_;
  const std::int32_t* codes = rows.codes_.data() + from * nc;
  const double* coords = rows.coords_.data() + from * nx;
  const bool trend = hyper_.lambda > 0;
  for (std::size_t r = from; r < to; ++r, codes += nc, coords += nx) {
    std::size_t d = 0;
    for (std::size_t p = 0; p < nc; ++p) d += a.codes[p] != codes[p];
    // Summed in squared_distance()'s order, so the bits are kernel()'s.
    double squared = 0;
    if (trend)
      for (std::size_t p = 0; p < nx; ++p)
        squared += (a.coords[p] - coords[p]) * (a.coords[p] - coords[p]);
    *out++ = kernel_of(d, squared, hyper_);
  }
}

bool CategoricalGp::factor(const GpHyper& h) {
  ++whole_factors_;
  const std::size_t n = x_.size();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j)
      chol_[i * stride_ + j] = kernel(x_[i], x_[j], h) + (i == j ? h.noise : 0.0);
  return factor_lower(chol_, n, stride_);
}

void CategoricalGp::standardise(const std::vector<double>& y) {
  const auto n = static_cast<double>(y.size());
  double sum = 0, sq = 0;
  for (double v : y) sum += v;
  offset_ = sum / n;
  for (double v : y) sq += (v - offset_) * (v - offset_);
  scale_ = std::sqrt(sq / n);
  if (!(scale_ > 1e-12)) scale_ = 1;  // all alike: any scale will do
  z_.resize(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) z_[i] = (y[i] - offset_) / scale_;
  best_ = *std::min_element(z_.begin(), z_.end());
}

void CategoricalGp::fit(const std::vector<GpRow>& x, const std::vector<double>& y) {
  // The grid scores the hyperparameters on at most kFitRows rows spread
  // evenly over the data: they describe the space as a whole, which that
  // many rows show as well as more, and each of the grid's factors costs
  // rows^3.
  std::vector<GpRow> sx;
  std::vector<double> sy;
  const std::size_t total = x.size();
  for (std::size_t k = 0, m = std::min(total, kFitRows); k < m; ++k) {
    sx.push_back(x[k * total / m]);
    sy.push_back(y[k * total / m]);
  }
  x_ = std::move(sx);
  standardise(sy);
  const std::size_t n = x_.size();
  // What the grid varies, computed once: codes differing, squared distances.
  std::vector<double> mismatch(n * n), distance(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      mismatch[i * n + j] = static_cast<double>(differing(x_[i], x_[j]));
      distance[i * n + j] = squared_distance(x_[i], x_[j]);
    }
  double best_ll = -std::numeric_limits<double>::infinity();
  GpHyper best = hyper_;
  std::vector<double> k(n * n), alpha(n);
  for (double theta : kThetas)
    for (double lambda : kLambdas) {
      if (lambda > 0 && x_[0].coords.empty()) continue;  // no axis to trend along
      for (double noise : kNoises) {
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j <= i; ++j)
            k[i * n + j] = std::exp(-theta * mismatch[i * n + j] - lambda * distance[i * n + j]) +
                           (i == j ? noise : 0.0);
        if (!factor_lower(k, n, n)) continue;
        alpha = z_;
        solve_lower(k, n, n, alpha);
        // log marginal likelihood, less constants: -1/2 z^T K^-1 z - log det L
        double ll = 0;
        for (std::size_t i = 0; i < n; ++i)
          ll += -0.5 * alpha[i] * alpha[i] - std::log(k[i * n + i]);
        if (ll > best_ll) {
          best_ll = ll;
          best = {theta, lambda, noise};
        }
      }
    }
  hyper_ = best;
  tabled_theta_ = best.theta;
  tabled_.resize(x_.empty() ? 1 : x_[0].codes.size() + 1);
  for (std::size_t d = 0; d < tabled_.size(); ++d) {
    const double e = best.theta * static_cast<double>(d);
    tabled_[d] = std::exp(-e);
  }
  factored_ = false;
  condition(x, y);
}

void CategoricalGp::condition(const std::vector<GpRow>& x, const std::vector<double>& y) {
  // The factor of K's leading block is the leading block of K's factor, so
  // rows conditioned on before (a search appends its measurements) keep
  // theirs and each new row costs n^2, not the n^3 of a fresh factor.
  std::size_t kept = factored_ && hyper_ == factored_hyper_ ? std::min(x_.size(), x.size()) : 0;
  for (std::size_t i = 0; i < kept; ++i)
    if (x_[i].codes != x[i].codes || x_[i].coords != x[i].coords) kept = i;
  const std::size_t n = x.size();
  // The factor lives in a square of `stride_` rows and columns, grown by
  // half each time, so appending rows seldom reallocates or moves the kept
  // ones (a fresh n x n copy per call was 6% of a long search's time).
  if (n > stride_) {
    const std::size_t stride = std::max({n, stride_ + stride_ / 2, std::size_t{64}});
    std::vector<double> grown(stride * stride, 0.0);
    for (std::size_t i = 0; i < kept; ++i)
      std::copy_n(&chol_[i * stride_], i + 1, &grown[i * stride]);
    chol_ = std::move(grown);
    stride_ = stride;
  }
  x_.resize(kept);
  x_.insert(x_.end(), x.begin() + static_cast<std::ptrdiff_t>(kept), x.end());
  bool ok = kept > 0;
  for (std::size_t i = kept; i < n && ok; ++i) ok = append(i);
  if (!ok) {
    // A noise too small for these rows (near duplicates): more, until K factors.
    while (!factor(hyper_) && hyper_.noise < 1e6) hyper_.noise *= 10;
  }
  factored_ = true;
  factored_hyper_ = hyper_;
  standardise(y);
  alpha_ = z_;
  solve_lower(chol_, n, stride_, alpha_);
  solve_upper(chol_, n, stride_, alpha_);
}

bool CategoricalGp::append(std::size_t i) {
  const std::size_t n = stride_;
  double* const li = &chol_[i * n];
  for (std::size_t j = 0; j < i; ++j) li[j] = kernel(x_[i], x_[j], hyper_);
  // L[i, :i] solves L[:i, :i] l = k; L[i, i] = sqrt(k_ii + noise - l.l).
  double d = 1.0 + hyper_.noise;
  for (std::size_t j = 0; j < i; ++j) {
    double s = li[j];
    for (std::size_t k = 0; k < j; ++k) s -= chol_[j * n + k] * li[k];
    li[j] = s / chol_[j * n + j];
    d -= li[j] * li[j];
  }
  if (!(d > 0)) return false;
  li[i] = std::sqrt(d);
  return true;
}

CategoricalGp::Posterior CategoricalGp::predict_bound(const GpRow& row) const {
  std::vector<double> k(x_.size());
  for (std::size_t i = 0; i < x_.size(); ++i) k[i] = kernel(row, x_[i], hyper_);
  return bound_from(k, {});
}

CategoricalGp::Posterior CategoricalGp::predict(const GpRow& row) const {
  std::vector<double> k(x_.size());
  for (std::size_t i = 0; i < x_.size(); ++i) k[i] = kernel(row, x_[i], hyper_);
  return predict_from(std::move(k));
}

CategoricalGp::Posterior CategoricalGp::bound_from(std::span<const double> head,
                                                   std::span<const double> tail) const {
  double mean = 0, nearest = 0;
  for (std::size_t i = 0; i < head.size(); ++i) {
    mean += head[i] * alpha_[i];
    nearest = std::max(nearest, head[i]);
  }
  for (std::size_t i = 0; i < tail.size(); ++i) {
    mean += tail[i] * alpha_[head.size() + i];
    nearest = std::max(nearest, tail[i]);
  }
  return bounded(mean, nearest);
}

CategoricalGp::Posterior CategoricalGp::bounded(double mean, double nearest) const {
  // Conditioning on more rows never widens the posterior, so the nearest
  // row alone bounds the sd: 1 - k^2 / (1 + noise) of the prior's variance.
  return {mean, std::sqrt(std::max(1.0 - nearest * nearest / (1.0 + hyper_.noise), 1e-9))};
}

void CategoricalGp::bounds_from(std::span<const std::span<const double>> heads,
                                std::span<const std::span<const double>> tails,
                                Posterior* out) const {
  constexpr std::size_t kLanes = 4;  // sums in flight at once; eight ran no faster
  std::size_t c = 0;
  for (; c + kLanes <= heads.size(); c += kLanes) {
    const std::size_t n = heads[c].size();
    bool level = true;  // every lane's head and tail of one length
    for (std::size_t l = 1; l < kLanes; ++l)
      level = level && heads[c + l].size() == n && tails[c + l].size() == tails[c].size();
    if (!level) {
      for (std::size_t l = 0; l < kLanes; ++l) out[c + l] = bound_from(heads[c + l], tails[c + l]);
      continue;
    }
    double mean[kLanes] = {}, nearest[kLanes] = {};
    const double* h[kLanes];
    for (std::size_t l = 0; l < kLanes; ++l) h[l] = heads[c + l].data();
    for (std::size_t i = 0; i < n; ++i) {
      const double a = alpha_[i];
      for (std::size_t l = 0; l < kLanes; ++l) {
        mean[l] += h[l][i] * a;
        nearest[l] = std::max(nearest[l], h[l][i]);
      }
    }
    for (std::size_t l = 0; l < kLanes; ++l) {
      const std::span<const double> tail = tails[c + l];
      for (std::size_t i = 0; i < tail.size(); ++i) {
        mean[l] += tail[i] * alpha_[n + i];
        nearest[l] = std::max(nearest[l], tail[i]);
      }
      out[c + l] = bounded(mean[l], nearest[l]);
    }
  }
  for (; c < heads.size(); ++c) out[c] = bound_from(heads[c], tails[c]);
}

CategoricalGp::Posterior CategoricalGp::predict_from(std::vector<double> k) const {
  std::vector<double> v;
  solve_more(k, v);
  return predict_solved(k, v);
}

void CategoricalGp::solve_more(std::span<const double> k, std::vector<double>& v) const {
  // solve_lower's arithmetic, in its order, from row v.size() on.
  for (std::size_t i = v.size(); i < k.size(); ++i) {
    double s = k[i];
    const double* row = &chol_[i * stride_];
    for (std::size_t j = 0; j < i; ++j) s -= row[j] * v[j];
    v.push_back(s / row[i]);
  }
}

CategoricalGp::Posterior CategoricalGp::predict_solved(std::span<const double> k,
                                                       std::span<const double> v) const {
  double mean = 0;
  for (std::size_t i = 0; i < k.size(); ++i) mean += k[i] * alpha_[i];
  double explained = 0;
  for (double e : v) explained += e * e;
  return {mean, std::sqrt(std::max(1.0 - explained, 1e-9))};
}

double CategoricalGp::expected_improvement(double mean, double sd) const {
  const double gain = best_ - mean, z = gain / sd;
  const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
  return gain * cdf + sd * pdf;
}

}  // namespace kiln::internal
