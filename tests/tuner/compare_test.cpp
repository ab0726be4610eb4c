#include "kiln/tuner/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln {
namespace {

TEST(Compare, EqualVectorsPass) {
  std::vector<double> a = {1, 2, 3};
  auto c = compare(a, a, {});
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.mismatches, 0u);
  EXPECT_DOUBLE_EQ(c.cosine, 1.0);
}

TEST(Compare, MismatchCarriesItsEvidence) {
  std::vector<double> ref = {1, 2, 3, 4};
  std::vector<double> out = {1, 2.5, 3, 4};
  auto c = compare(out, ref, {1e-3, 1e-3, 0});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.mismatches, 1u);
  EXPECT_EQ(c.first_mismatch, 1u);
  EXPECT_DOUBLE_EQ(c.max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(c.max_rel_error, 0.25);
  std::string d = c.describe();
  EXPECT_NE(d.find("1 of 4 elements differ"), std::string::npos) << d;
  EXPECT_NE(d.find("first at index 1"), std::string::npos) << d;
}

TEST(Compare, RelativeToleranceScalesWithTheReference) {
  std::vector<double> ref = {1000.0};
  std::vector<double> out = {1000.5};
  EXPECT_TRUE(compare(out, ref, {0, 1e-3, 0}).ok);
  EXPECT_FALSE(compare(out, ref, {0, 1e-4, 0}).ok);
}

TEST(Compare, NanAndInfAreNeverClose) {
  std::vector<double> ref = {1, 2};
  std::vector<double> nan_out = {1, std::nan("")};
  auto c = compare(nan_out, ref, {1, 1, 0});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.nonfinite, 1u);
  std::vector<double> both_nan_ref = {1, std::nan("")};
  EXPECT_TRUE(compare(nan_out, both_nan_ref, {}).ok);
  std::vector<double> inf = {1, INFINITY};
  EXPECT_FALSE(compare(inf, ref, {1e9, 1e9, 0}).ok);
}

TEST(Compare, LengthMismatchFails) {
  std::vector<double> a = {1, 2}, b = {1};
  EXPECT_FALSE(compare(a, b, {}).ok);
}

TEST(Compare, CosineModeToleratesSmallEverywhereDifferences) {
  std::vector<double> ref(1000), out(1000);
  for (int i = 0; i < 1000; ++i) {
    ref[i] = std::sin(i * 0.1);
    out[i] = ref[i] * 1.001 + 1e-4;
  }
  EXPECT_FALSE(compare(out, ref, {0, 1e-4, 0}).ok);
  EXPECT_TRUE(compare(out, ref, {0, 0, 0.999}).ok);
  for (double& v : out) v = -v;
  EXPECT_FALSE(compare(out, ref, {0, 0, 0.999}).ok);
}

TEST(Compare, HalfRoundTripsExactlyRepresentableValues) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f}) {
    EXPECT_EQ(half_to_float(float_to_half(f)), f) << f;
  }
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);  // overflow to Inf
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::nanf("")))));
  // Round to nearest even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048), 0x3c00);
  EXPECT_EQ(float_to_half(1.0f + 3.0f / 2048), 0x3c02);
}

TEST(Compare, Bf16RoundTrips) {
  for (float f : {0.0f, 1.0f, -3.0f, 1.5e30f}) {
    float back = bf16_to_float(float_to_bf16(f));
    EXPECT_NEAR(back, f, std::fabs(f) * 1e-2) << f;
  }
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
}

TEST(Compare, ToDoubleDecodesEveryDtype) {
  std::uint16_t h[] = {float_to_half(1.5f), float_to_half(-2.0f)};
  EXPECT_EQ(to_double(DType::kF16, h, 2), (std::vector<double>{1.5, -2.0}));
  std::int32_t i[] = {7, -9};
  EXPECT_EQ(to_double(DType::kI32, i, 2), (std::vector<double>{7, -9}));
  float f[] = {0.25f};
  EXPECT_EQ(to_double(DType::kF32, f, 1), (std::vector<double>{0.25}));
}

}  // namespace
}  // namespace kiln
