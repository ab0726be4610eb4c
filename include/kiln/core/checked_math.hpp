// Checked integer arithmetic for sizes computed from user input: products
// of dimensions, byte counts, strides, launch grids, and narrowing to the
// widths kernels and drivers take (an i32 scalar, a uint32 grid extent).
// Every such computation goes through these, so none can wrap: a wrapped
// `count * dtype_size` once allocated a 1-byte buffer for a 2^64-byte
// tensor and the kernel then wrote past it.
//
//   auto bytes = checked_mul<std::int64_t>(m, k);        // nullopt on overflow
//   auto grid = checked_narrow<std::uint32_t>(blocks);   // nullopt when it does not fit
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <utility>

namespace kiln {

template <class T>
std::optional<T> checked_add(T a, T b) {
  T r{};
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

template <class T>
std::optional<T> checked_sub(T a, T b) {
  T r{};
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

template <class T>
std::optional<T> checked_mul(T a, T b) {
  T r{};
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The product of `factors` (1 for none); nullopt when any step overflows T.
template <class T>
std::optional<T> checked_product(std::initializer_list<T> factors) {
  T r = 1;
  for (T f : factors) {
    if (__builtin_mul_overflow(r, f, &r)) return std::nullopt;
  }
  return r;
}

// `value` as a To when To represents it exactly (signedness included:
// -1 never becomes 4294967295), else nullopt.
template <class To, class From>
std::optional<To> checked_narrow(From value) {
  if constexpr (std::is_same_v<From, bool>) {
    return static_cast<To>(value);  // 0 or 1 (std::in_range takes no bool)
  } else {
    if (!std::in_range<To>(value)) return std::nullopt;
    return static_cast<To>(value);
  }
}

// ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b.
constexpr std::int64_t ceil_div_nonneg(std::int64_t a, std::int64_t b) {
  return a / b + (a % b != 0);
}

}  // namespace kiln
