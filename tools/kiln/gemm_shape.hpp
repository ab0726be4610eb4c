// The problems `kiln bench gemm --sizes` names: "512" is M=N=K=512,
// "16x4096x4096" is M=16, N=4096, K=4096 (a skinny GEMM: a decode step's
// batch of 16 rows against a square weight).
#pragma once

#include <string>
#include <vector>

#include "kiln/core/error.hpp"

namespace kiln::tool {

struct GemmShape {
  int m = 0, n = 0, k = 0;
  bool square() const { return m == n && n == k; }
  // "512" when square, else "MxNxK": how --sizes names it.
  std::string label() const;
  // The kernel's shape: "M=..,N=..,K=..".
  std::string dims() const;
  double flops() const { return 2.0 * m * static_cast<double>(n) * k; }
  bool operator==(const GemmShape&) const = default;
};

// Every comma-separated item a size ("512") or "MxNxK", each number from 1
// to kMaxBenchSize, none named twice; an error names the item and the form.
Result<std::vector<GemmShape>> parse_gemm_shapes(const std::string& text);

}  // namespace kiln::tool
