// Checked size arithmetic: products, sums and narrowings that would wrap
// are refused, at the exact edge of each type; tensor sizes and launch grids
// built on them throw naming the shape instead of wrapping.
#include "kiln/core/checked_math.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "kiln/core/error.hpp"
#include "kiln/core/tensor.hpp"
#include "kiln/device/device.hpp"

namespace kiln {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CheckedMath, ProductsAndSumsStopAtTheEdge) {
  EXPECT_EQ(checked_mul<std::int64_t>(3037000499, 3037000499), 9223372030926249001);
  EXPECT_FALSE(checked_mul<std::int64_t>(3037000500, 3037000500));
  // The wrap that once sized a 2^64-byte tensor as 0 bytes.
  EXPECT_FALSE(checked_mul<std::uint64_t>(std::uint64_t{1} << 62, 4));
  EXPECT_FALSE(checked_mul<std::int64_t>(kMin, -1));
  EXPECT_EQ(checked_add<std::int64_t>(kMax - 1, 1), kMax);
  EXPECT_FALSE(checked_add<std::int64_t>(kMax, 1));
  EXPECT_FALSE(checked_sub<std::int64_t>(kMin, 1));
  EXPECT_EQ(checked_product<std::int64_t>({}), 1);
  EXPECT_EQ(checked_product<std::int64_t>({2147483648, 2147483648}), std::int64_t{1} << 62);
  EXPECT_FALSE(checked_product<std::int64_t>({2147483648, 2147483648, 4}));
  // A zero anywhere is 0, but a step that overflows first is still refused.
  EXPECT_EQ(checked_product<std::int64_t>({0, kMax, 2}), 0);
  EXPECT_FALSE(checked_product<std::int64_t>({kMax, 2, 0}));
}

TEST(CheckedMath, NarrowingNeverWrapsOrChangesSign) {
  EXPECT_EQ(checked_narrow<std::int32_t>(std::int64_t{2147483647}), 2147483647);
  EXPECT_FALSE(checked_narrow<std::int32_t>(std::int64_t{2147483648}));
  EXPECT_EQ(checked_narrow<std::int32_t>(std::int64_t{-2147483648}), -2147483647 - 1);
  EXPECT_FALSE(checked_narrow<std::int32_t>(std::int64_t{-2147483649}));
  EXPECT_FALSE(checked_narrow<std::uint32_t>(std::int64_t{-1}));
  EXPECT_EQ(checked_narrow<std::uint32_t>(std::int64_t{4294967295}), 4294967295u);
  EXPECT_FALSE(checked_narrow<std::uint32_t>(std::int64_t{4294967296}));
  EXPECT_FALSE(checked_narrow<std::uint64_t>(std::int64_t{-1}));
  EXPECT_FALSE(checked_narrow<std::int64_t>(std::numeric_limits<std::uint64_t>::max()));
  EXPECT_FALSE(checked_narrow<std::size_t>(std::int64_t{-5}));
  EXPECT_EQ(checked_narrow<std::int64_t>(true), 1);
}

TEST(CheckedMath, CeilDivHasNoIntermediateOverflow) {
  EXPECT_EQ(ceil_div_nonneg(kMax, 1), kMax);  // (a + b - 1) / b would wrap here
  EXPECT_EQ(ceil_div_nonneg(kMax, 2), kMax / 2 + 1);
  EXPECT_EQ(ceil_div_nonneg(0, 7), 0);
  EXPECT_EQ(ceil_div_nonneg(7, 7), 1);
  EXPECT_EQ(ceil_div_nonneg(8, 7), 2);
}

TEST(CheckedMath, GridExtentsAreCheckedNotTruncated) {
  EXPECT_EQ(grid_extent(1000, 64, "grid.x"), 16u);
  EXPECT_EQ(grid_extent(0, 64, "grid.x"), 0u);
  EXPECT_EQ(grid_extent(std::int64_t{4294967295} * 64, 64, "grid.x"), 4294967295u);
  // 2^32 blocks would be truncated to 0 by a cast: an error naming the grid.
  const std::string e =
      error_of([] { (void)grid_extent(std::int64_t{1} << 32, 1, "grid.y (M / BM)"); });
  EXPECT_NE(e.find("grid.y (M / BM)"), std::string::npos) << e;
  EXPECT_NE(e.find("4294967296 blocks"), std::string::npos) << e;
  EXPECT_NE(error_of([] { (void)grid_extent(kMax, 1, "g"); }).find("2^32-1"), std::string::npos);
  EXPECT_NE(error_of([] { (void)grid_extent(-1, 8, "g"); }), "");
  EXPECT_NE(error_of([] { (void)grid_extent(8, 0, "g"); }), "");
}

TEST(CheckedMath, TensorSizesThrowNamingTheShape) {
  // Element count fits, bytes do not.
  TensorArg wide =
      TensorArg::contiguous(DType::kF32, {std::int64_t{1} << 31, std::int64_t{1} << 31});
  EXPECT_EQ(wide.numel(), std::int64_t{1} << 62);
  const std::string bytes = error_of([&] { (void)wide.storage_bytes("C"); });
  EXPECT_NE(bytes.find("'C'"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("[2147483648, 2147483648]"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("overflows"), std::string::npos) << bytes;
  EXPECT_NE(error_of([&] { wide.validate("C"); }), "");
  // Element count overflows: numel and the contiguous strides refuse it.
  EXPECT_NE(error_of([] {
              (void)TensorArg::contiguous(DType::kF32, {2, kMax, 2});
            }).find("stride"),
            std::string::npos);
  TensorArg huge{DType::kI8, {kMax, 2}, {0, 1}, {}};
  EXPECT_NE(error_of([&] { (void)huge.numel("h"); }).find("element count"), std::string::npos);
  // Strides that address past 2^63 bytes.
  TensorArg strided{DType::kF64, {3, 3}, {kMax / 4, 1}, {}};
  EXPECT_NE(error_of([&] { strided.validate("s"); }).find("overflows"), std::string::npos);
  // Ordinary tensors are unchanged: the span of a transposed view, empty ones.
  TensorArg view{DType::kF32, {4, 8}, {1, 4}, {}};
  EXPECT_EQ(view.storage_bytes(), (3 * 1 + 7 * 4 + 1) * 4);
  TensorArg empty = TensorArg::contiguous(DType::kF32, {0, kMax});
  EXPECT_EQ(empty.storage_bytes(), 0);
  EXPECT_EQ(TensorArg::contiguous(DType::kF16, {}).storage_bytes(), 2);
}

}  // namespace
}  // namespace kiln
