// The median of a sample of timings, shared by the `kiln bench` commands
// (one definition: the tool is a unity build, two local copies collide).
#pragma once

#include <algorithm>
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

}  // namespace kiln::tool
