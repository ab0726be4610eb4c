// The shipped CUDA row kernels without a GPU: their spaces, their registry
// entries, and a real NVRTC compile of every config for sm_90a (one
// program per kernel and dtype, so the whole space costs four compiles).
#include <gtest/gtest.h>

#include "cuda/nvrtc_api.hpp"
#include "cuda_row_kernels.hpp"
#include "kiln/backends/nvrtc.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/compile/compile_engine.hpp"
#include "sanitized.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

std::vector<KernelTemplate> row_templates() {
  return {
      internal::cuda_rmsnorm_template(DType::kF16), internal::cuda_rmsnorm_template(DType::kBF16),
      internal::cuda_softmax_template(DType::kF16), internal::cuda_softmax_template(DType::kBF16)};
}

TEST(RowKernels, SpacesRespectTheBlockLimitAndUseEveryParameter) {
  for (const KernelTemplate& t : row_templates()) {
    EXPECT_TRUE(t.check().empty()) << t.name;
    EXPECT_LT(t.space.size(), t.space.cartesian_size()) << t.name << ": the constraint prunes";
    EXPECT_GE(t.space.size(), 40u) << t.name;
    for (const Config& c : t.space.enumerate())
      EXPECT_LE(c.get_int("THREADS") * c.get_int("ROWS"), 1024) << t.name;
    EXPECT_TRUE(t.space.contains(t.space.default_config())) << t.name;
  }
}

TEST(RowKernels, EntriesDescribeTheirCalls) {
  const auto kernels = internal::cuda_row_kernels();
  ASSERT_EQ(kernels.size(), 4u);
  for (const ShippedKernel& k : kernels) {
    EXPECT_EQ(k.backend, "cuda") << k.name;
    const TunableKernel t = k.kernel();
    EXPECT_EQ(t.tmpl.name, k.name);
    // The launch rule: a block of THREADS x ROWS, grid over the rows, and
    // a config whose VEC does not divide the row fails with the reason.
    const std::string width = k.dims[1];
    ArgList args = {Arg::of_scalar("rows", std::int32_t{10}),
                    Arg::of_scalar(width, std::int32_t{100})};
    const Config c{
        {"THREADS", std::int64_t{64}}, {"VEC", std::int64_t{4}}, {"ROWS", std::int64_t{4}}};
    const LaunchGeometry g = t.launch(c, args);
    EXPECT_EQ(g.grid.x, 3u);
    EXPECT_EQ(g.block.x, 64u);
    EXPECT_EQ(g.block.y, 4u);
    const Config odd{
        {"THREADS", std::int64_t{64}}, {"VEC", std::int64_t{8}}, {"ROWS", std::int64_t{1}}};
    EXPECT_THROW((void)t.launch(odd, args), Error) << k.name;
  }
  EXPECT_TRUE(kernels[0].in_place);
  EXPECT_FALSE(kernels[2].in_place);
}

// One test per kernel and dtype, so a parallel ctest spreads the four
// compiles (about 12 s each) over its cores instead of one test taking 50 s.
class RowKernelCompile : public ::testing::TestWithParam<std::size_t> {};

TEST_P(RowKernelCompile, EveryConfigCompilesForSm90a) {
  // 12-16 s each under TSan, all of it in NVRTC, on one thread of Kiln's.
  KILN_SKIP_UNDER_TSAN("NVRTC compiling a whole space");
  if (!cuda::nvrtc().ok()) KILN_SKIP(Skip::kCudaToolkit) << cuda::nvrtc().error().describe();
  auto compiler = cuda::make_compiler();
  CompileContext context{current_toolchain("cuda"), CacheEnvRegistry::global().snapshot()};
  const KernelTemplate t = row_templates().at(GetParam());
  std::vector<Specialization> specs;
  for (const Config& c : t.space.enumerate()) specs.push_back(t.specialize(c));
  auto units = group(t, specs, GroupOptions{specs.size(), "sm_90a", BinaryFormat::kCubin});
  ASSERT_EQ(units.size(), 1u) << t.name;
  UnitResult r = compile_isolated(*compiler, units[0], CancelToken(), context);
  ASSERT_EQ(r.entries.size(), specs.size()) << t.name;
  for (const auto& e : r.entries) {
    ASSERT_TRUE(e.ok()) << t.name << ": " << e.error().describe();
    EXPECT_NE(e->binary->find(e->lowered_name), std::string::npos) << t.name;
  }
}

std::string row_kernel_name(const ::testing::TestParamInfo<std::size_t>& info) {
  static const char* const kNames[] = {"rmsnorm_f16", "rmsnorm_bf16", "softmax_f16",
                                       "softmax_bf16"};
  return kNames[info.param];
}

INSTANTIATE_TEST_SUITE_P(RowKernels, RowKernelCompile, ::testing::Range<std::size_t>(0, 4),
                         row_kernel_name);

}  // namespace
}  // namespace kiln
