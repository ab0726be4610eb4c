// A CPU template whose config V repeats its work V times: configs of
// distinct, predictable cost, all correct (tuning tests of options that
// are not about speed).
#pragma once

namespace kiln::testing {

inline constexpr const char* kTwiceSource = R"(
#include "kiln/cpu_kernel.h"
namespace t {
template <int V>
void twice(const kiln::cpu::BlockContext&, const float* x, float* y, int n) {
  for (int r = 0; r < V; ++r)
    for (int i = 0; i < n; ++i) y[i] = x[i] * 2.0f;
}
}  // namespace t
)";

}  // namespace kiln::testing
