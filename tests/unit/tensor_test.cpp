#include "kiln/core/tensor.hpp"

#include <gtest/gtest.h>

#include "kiln/core/error.hpp"

namespace kiln {
namespace {

using SC = StrideClass;

TEST(Tensor, ContiguousStridesAreRowMajor) {
  auto t = TensorArg::contiguous(DType::kF16, {4, 8, 16});
  EXPECT_EQ(t.strides, (std::vector<std::int64_t>{128, 16, 1}));
  EXPECT_EQ(t.numel(), 512);
}

TEST(Tensor, StridePatternClassesEachDim) {
  TensorArg t{DType::kF32, {4, 8, 16}, {0, 16, 1}, {}};
  EXPECT_EQ(stride_pattern(t), (std::vector<SC>{SC::kBroadcast, SC::kOther, SC::kContiguous}));
  EXPECT_EQ(stride_pattern_text(stride_pattern(t)), "0,2,1");
}

TEST(Tensor, TransposedIsOtherThenContiguousDiffers) {
  TensorArg row{DType::kF32, {64, 32}, {32, 1}, {}};
  TensorArg col{DType::kF32, {64, 32}, {1, 64}, {}};
  EXPECT_NE(stride_pattern(row), stride_pattern(col));
}

TEST(Tensor, ExtentOneDimIgnoresItsStride) {
  // Frameworks give size-1 dims arbitrary strides; they must not split keys.
  TensorArg a{DType::kF32, {1, 32}, {32, 1}, {}};
  TensorArg b{DType::kF32, {1, 32}, {999, 1}, {}};
  TensorArg c{DType::kF32, {1, 32}, {0, 1}, {}};
  EXPECT_EQ(stride_pattern(a), stride_pattern(b));
  EXPECT_EQ(stride_pattern(a), stride_pattern(c));
}

TEST(Tensor, ValidateNamesTheArgument) {
  TensorArg bad{DType::kF32, {4, 4}, {1}, {}};
  try {
    bad.validate("lhs");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'lhs'"), std::string::npos) << e.what();
  }
  TensorArg neg{DType::kF32, {4}, {-1}, {}};
  EXPECT_THROW(neg.validate(), Error);
}

TEST(Tensor, DTypeNamesAndAliases) {
  EXPECT_EQ(parse_dtype("bf16"), DType::kBF16);
  EXPECT_EQ(parse_dtype("float16"), DType::kF16);
  EXPECT_EQ(dtype_size(DType::kF64), 8u);
  EXPECT_STREQ(dtype_name(DType::kI32), "i32");
  EXPECT_THROW(parse_dtype("f8"), Error);
}

TEST(Tensor, DeviceText) {
  EXPECT_EQ((DeviceRef{"cuda", 1}).to_string(), "cuda:1");
  EXPECT_EQ(DeviceRef{}.to_string(), "cpu");
}

}  // namespace
}  // namespace kiln
