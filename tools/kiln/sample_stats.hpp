// The median and quantiles of a sample, shared by the `kiln bench` commands
// (one definition: the tool is a unity build, two local copies collide).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln::tool {

// The median of `v` (the mean of the two middle values for an even count);
// 0 for an empty sample.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The q-quantile of `v` (0.25, 0.5, 0.75: quartiles), linear between
// neighbouring values; 0 for an empty sample.
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

}  // namespace kiln::tool
