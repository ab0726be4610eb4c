// Correctness checks: a config's output against a reference, elementwise
// with atol/rtol (allclose) or as a whole by cosine similarity (for outputs
// of different backends, whose rounding differs everywhere a little).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/tensor.hpp"

namespace kiln {

struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-3;
  // When > 0, compare by cosine similarity instead: pass when >= this.
  double min_cosine = 0;

  // Defaults suited to a dtype: f16/bf16 outputs of fp32-accumulating
  // kernels differ from an fp32 reference by their own rounding.
  static Tolerance for_dtype(DType dtype);
};

struct Comparison {
  bool ok = true;
  std::size_t count = 0;
  std::size_t mismatches = 0;      // elements outside atol + rtol*|ref|
  std::size_t first_mismatch = 0;  // index of the first, when mismatches > 0
  double max_abs_error = 0;
  double max_rel_error = 0;
  std::size_t nonfinite = 0;  // NaN/Inf in the output where the reference is finite
  double cosine = 1;          // cosine similarity of the two vectors

  // "3 of 4096 elements differ (first at 17: 1.5 vs 1.0), max abs error 0.5,
  // max rel error 0.5, cosine 0.9999"; the evidence a failed config carries.
  std::string describe() const;
};

// Compares `out` with `ref` (same length: otherwise a failed comparison that
// says so). NaN in the output fails unless the reference has NaN there too.
Comparison compare(std::span<const double> out, std::span<const double> ref, const Tolerance& tol);

// Widens `count` elements of `dtype` at `data` to double (f16 and bf16
// decoded bit-exactly), so every dtype goes through one comparison.
std::vector<double> to_double(DType dtype, const void* data, std::size_t count);

// IEEE half and bfloat16 decoding and encoding (round to nearest even).
float half_to_float(std::uint16_t bits);
std::uint16_t float_to_half(float value);
float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16(float value);

}  // namespace kiln
