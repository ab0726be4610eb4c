#include "kiln/tuner/compare.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "kiln/core/error.hpp"

namespace kiln {

Tolerance Tolerance::for_dtype(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return {1e-2, 1e-2, 0};
    case DType::kBF16:
      return {2e-2, 2e-2, 0};
    case DType::kF32:
      return {1e-4, 1e-4, 0};
    case DType::kF64:
      return {1e-8, 1e-8, 0};
    default:
      return {0, 0, 0};  // integers and bools compare exactly
  }
}

Comparison compare(std::span<const double> out, std::span<const double> ref, const Tolerance& tol) {
  Comparison c;
  c.count = out.size();
  if (out.size() != ref.size()) {
    c.ok = false;
    c.mismatches = std::max(out.size(), ref.size());
    c.max_abs_error = INFINITY;
    return c;
  }
  double dot = 0, norm_out = 0, norm_ref = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    double o = out[i], r = ref[i];
    bool bad;
    if (std::isnan(r)) {
      bad = !std::isnan(o);
    } else if (!std::isfinite(o) || !std::isfinite(r)) {
      bad = o != r;  // Inf matches only the same Inf
      if (!std::isfinite(o) && std::isfinite(r)) ++c.nonfinite;
    } else {
      double abs_err = std::fabs(o - r);
      double rel_err = r != 0 ? abs_err / std::fabs(r) : (abs_err > 0 ? INFINITY : 0);
      c.max_abs_error = std::max(c.max_abs_error, abs_err);
      if (std::isfinite(rel_err)) c.max_rel_error = std::max(c.max_rel_error, rel_err);
      bad = abs_err > tol.atol + tol.rtol * std::fabs(r);
      dot += o * r;
      norm_out += o * o;
      norm_ref += r * r;
    }
    if (bad) {
      if (c.mismatches == 0) c.first_mismatch = i;
      ++c.mismatches;
    }
  }
  if (norm_out > 0 && norm_ref > 0)
    c.cosine = dot / (std::sqrt(norm_out) * std::sqrt(norm_ref));
  else
    c.cosine = (norm_out == norm_ref) ? 1.0 : 0.0;
  c.ok = tol.min_cosine > 0 ? (c.cosine >= tol.min_cosine && c.nonfinite == 0) : c.mismatches == 0;
  return c;
}

std::string Comparison::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%zu of %zu elements differ, max abs error %.3g, max rel error %.3g, cosine %.6f",
                mismatches, count, max_abs_error, max_rel_error, cosine);
  std::string out = buf;
  if (mismatches > 0) out += " (first at index " + std::to_string(first_mismatch) + ")";
  if (nonfinite > 0) out += ", " + std::to_string(nonfinite) + " non-finite outputs";
  return out;
}

float half_to_float(std::uint16_t h) {
  std::uint32_t sign = (h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1f;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<std::uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint16_t float_to_half(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  std::uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0);  // Inf/NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;                                     // overflow
  if (abs < 0x38800000u) {                                                           // subnormal
    if (abs < 0x33000000u) return sign;
    std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    int shift = 113 - static_cast<int>(abs >> 23) + 13;
    std::uint32_t half = mant >> shift;
    std::uint32_t rem = mant & ((1u << shift) - 1);
    std::uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return sign | static_cast<std::uint16_t>(half);
  }
  std::uint32_t half = ((abs >> 23) - 112) << 10 | (abs >> 13 & 0x3ffu);
  std::uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
  return sign | static_cast<std::uint16_t>(half);
}

float bf16_to_float(std::uint16_t bits) {
  std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, 4);
  return f;
}

std::uint16_t float_to_bf16(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even
  return static_cast<std::uint16_t>(bits >> 16);
}

std::vector<double> to_double(DType dtype, const void* data, std::size_t count) {
  std::vector<double> out(count);
  auto read = [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(data);
    for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<double>(p[i]);
  };
  switch (dtype) {
    case DType::kF16: {
      auto* p = static_cast<const std::uint16_t*>(data);
      for (std::size_t i = 0; i < count; ++i) out[i] = half_to_float(p[i]);
      break;
    }
    case DType::kBF16: {
      auto* p = static_cast<const std::uint16_t*>(data);
      for (std::size_t i = 0; i < count; ++i) out[i] = bf16_to_float(p[i]);
      break;
    }
    case DType::kF32:
      read(float{});
      break;
    case DType::kF64:
      read(double{});
      break;
    case DType::kI8:
      read(std::int8_t{});
      break;
    case DType::kU8:
      read(std::uint8_t{});
      break;
    case DType::kI16:
      read(std::int16_t{});
      break;
    case DType::kI32:
      read(std::int32_t{});
      break;
    case DType::kI64:
      read(std::int64_t{});
      break;
    case DType::kBool:
      read(bool{});
      break;
  }
  return out;
}

}  // namespace kiln
