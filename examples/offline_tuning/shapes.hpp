// The shapes both programs of the offline tuning example agree on: a
// deployment tunes exactly the shapes its model will call.
#pragma once

#include <vector>

#include "kiln/kernels/kernel_call.hpp"

namespace example {

// The shipped CPU GEMM (`kiln kernels` lists it with its space).
inline constexpr const char* kKernel = "gemm_f32";

inline std::vector<kiln::ShapeDims> shapes() {
  return {{{"M", 64}, {"N", 64}, {"K", 64}},
          {{"M", 128}, {"N", 256}, {"K", 64}},
          {{"M", 256}, {"N", 128}, {"K", 128}}};
}

inline std::string shape_text(const kiln::ShapeDims& d) {
  return "M=" + std::to_string(d.at("M")) + " N=" + std::to_string(d.at("N")) +
         " K=" + std::to_string(d.at("K"));
}

}  // namespace example
