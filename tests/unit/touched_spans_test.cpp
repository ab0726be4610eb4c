// touched_spans: the bytes a cold-cache flush evicts are exactly the call's
// tensors, strided ones up to their last element; scalars, raw pointers
// (their size is unknown) and empty tensors add nothing.
#include <gtest/gtest.h>

#include <vector>

#include "kiln/tuner/args.hpp"

namespace kiln {
namespace {

TEST(TouchedSpans, AreTheTensorsBytesAndNothingElse) {
  std::vector<float> a(6 * 4), out(3 * 8);
  int workspace = 0;
  const ArgList args = {
      Arg::of_tensor("a", a.data(), TensorArg::contiguous(DType::kF32, {6, 4})),
      Arg::of_scalar("n", std::int32_t{6}),
      Arg::of_scalar("flag", &workspace),
      // A 3x2 view with row stride 8: its last element is at 2*8 + 1.
      Arg::of_tensor("out", out.data(), TensorArg{DType::kF32, {3, 2}, {8, 1}, {}}),
      Arg::of_tensor("none", a.data(), TensorArg::contiguous(DType::kF32, {0, 4})),
  };
  const std::vector<DeviceSpan> spans = touched_spans(args);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].data, a.data());
  EXPECT_EQ(spans[0].bytes, 6u * 4u * sizeof(float));
  EXPECT_EQ(spans[1].data, out.data());
  EXPECT_EQ(spans[1].bytes, (2u * 8u + 1u + 1u) * sizeof(float));
  EXPECT_TRUE(touched_spans({}).empty());
}

}  // namespace
}  // namespace kiln
