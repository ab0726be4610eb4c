// The shipped CUDA row kernels on a device: each is tuned on a real call
// with every measured config checked against its host reference (a config
// that disagrees fails as wrong), and the winner is launched once more and
// compared with the reference by this test. Skips without a CUDA device.
#include <gtest/gtest.h>

#include "cuda_row_kernels.hpp"
#include "kiln/backends/toolchain.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

class RowKernelsGpu : public ::testing::TestWithParam<int> {};

TEST_P(RowKernelsGpu, EveryMeasuredConfigMatchesTheReference) {
  auto target = open_tuning_target("cuda");
  if (!target.ok()) KILN_SKIP(Skip::kGpu) << target.error().message;
  const ShippedKernel k = internal::cuda_row_kernels().at(static_cast<std::size_t>(GetParam()));
  // An odd row count leaves the last block partly idle; the width takes every VEC.
  const ShapeDims shape{{"rows", 37}, {k.dims[1], 1024}};
  auto call = make_call(*target->device, k.args(k.dtypes.front()), shape, 7);
  ASSERT_TRUE(call.ok()) << call.error().describe();
  const TunableKernel kernel = k.kernel();

  TuneOptions options;
  options.search.strategy = "exhaustive";  // the first 12 in enumeration order
  options.search.max_configs = 12;
  options.check.reference = ReferenceKind::kUser;
  options.check.reference_fn = k.reference;
  options.check.tolerance = k.tolerance(shape);
  options.cache.save = false;
  Autotuner tuner(target->backend, nullptr, nullptr);
  auto result = tuner.tune(kernel, call->args, *target->device, options);
  ASSERT_TRUE(result.ok()) << result.error().describe();
  EXPECT_EQ(result->source, ResultSource::kTuned);
  EXPECT_GE(result->measurements.size(), 8u);
  for (const Measurement& m : result->measurements)
    EXPECT_TRUE(m.ok()) << k.name << " " << m.config.to_string() << ": " << m.reason();

  // The winner once more, by hand: outputs against the reference on copies.
  auto expected = make_call(*target->device, k.args(k.dtypes.front()), shape, 7);
  ASSERT_TRUE(expected.ok());
  ASSERT_TRUE(k.reference(*target->device, expected->args).ok());
  auto fresh = make_call(*target->device, k.args(k.dtypes.front()), shape, 7);
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE(result->launch(*target->device, kernel, fresh->args).ok());
  ASSERT_TRUE(target->device->synchronize().ok());
  for (const std::string& out : kernel.outputs) {
    const Arg& got = find_arg(fresh->args, out);
    const Arg& want = find_arg(expected->args, out);
    std::vector<std::uint8_t> a(got.storage_bytes()), b(want.storage_bytes());
    ASSERT_TRUE(target->device->copy_to_host(a.data(), got.data, a.size()).ok());
    ASSERT_TRUE(target->device->copy_to_host(b.data(), want.data, b.size()).ok());
    const auto n = static_cast<std::size_t>(got.tensor.numel());
    const std::vector<double> got_v = to_double(got.tensor.dtype, a.data(), n);
    const std::vector<double> want_v = to_double(want.tensor.dtype, b.data(), n);
    const Comparison c = compare(got_v, want_v, *options.check.tolerance);
    EXPECT_TRUE(c.ok) << k.name << " " << out << ": " << c.describe();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shipped, RowKernelsGpu, ::testing::Range(0, 4), [](const ::testing::TestParamInfo<int>& p) {
      return internal::cuda_row_kernels().at(static_cast<std::size_t>(p.param)).name;
    });

}  // namespace
}  // namespace kiln
