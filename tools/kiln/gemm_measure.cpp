#include "gemm_measure.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::tool {

namespace {

// Up to 64 indices from 0 to count - 1, evenly spread, both ends included.
std::vector<int> spread_indices(int count) {
  const int picks = std::min(count, 64);
  std::vector<int> out;
  for (int i = 0; i < picks; ++i)
    out.push_back(picks == 1 ? 0
                             : static_cast<int>(static_cast<long>(i) * (count - 1) / (picks - 1)));
  return out;
}

}  // namespace

GemmCheck check_gemm(const float* a, const float* b, const float* c, int m, int n, int k) {
  GemmCheck check;
  for (int i : spread_indices(m)) {
    for (int j : spread_indices(n)) {
      double sum = 0, magnitude = 0;
      for (int p = 0; p < k; ++p) {
        const double product = static_cast<double>(a[static_cast<long>(i) * k + p]) *
                               static_cast<double>(b[static_cast<long>(p) * n + j]);
        sum += product;
        magnitude += std::fabs(product);
      }
      const double err = std::fabs(static_cast<double>(c[static_cast<long>(i) * n + j]) - sum);
      check.max_abs_err = std::max(check.max_abs_err, err);
      // A NaN, an infinity or an error where every product is 0 is as wrong
      // as it gets (the largest double: JSON has no infinity).
      if (!std::isfinite(err) || (magnitude == 0 && err > 0)) {
        check.max_abs_err = check.max_rel_err = std::numeric_limits<double>::max();
      } else if (magnitude > 0) {
        check.max_rel_err = std::max(check.max_rel_err, err / magnitude);
      }
    }
  }
  // NOTES: fp32 sums of K products of either sign err by a few roundings of
  // 2^-24 relative to the sum of their magnitudes (sqrt(K) at the very
  // worst seen); a wrong kernel (a missed or doubled tile, garbage at an
  // edge) errs by a whole product or more.
  check.correct = check.max_rel_err <= 32.0 * std::sqrt(static_cast<double>(k)) * 0x1p-24;
  return check;
}

}  // namespace kiln::tool
