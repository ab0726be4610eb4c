// The shipped kernel registry in process: name and family resolution, calls
// built from descriptions, and the in-place RMSNorm leaving its tensors as
// one clean run would, after tuning and on a cache hit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "kiln/backends/cpu.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/kernels/shipped_kernels.hpp"

namespace kiln {
namespace {

TEST(ShippedKernels, ResolveByNameOrFamily) {
  auto exact = resolve_shipped_kernel("gemm_f32", std::nullopt, std::nullopt);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ((*exact)->backend, "cpu");
  auto f16 = resolve_shipped_kernel("gemm", std::nullopt, DType::kF16);
  ASSERT_TRUE(f16.ok());
  EXPECT_EQ((*f16)->name, "gemm_f16");
  auto cpu = resolve_shipped_kernel("gemm", "cpu", std::nullopt);
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ((*cpu)->name, "gemm_f32");
  auto wrong = resolve_shipped_kernel("gemm_bf16", "cpu", std::nullopt);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("use --kernel gemm_f32"), std::string::npos);
  auto none = resolve_shipped_kernel("conv", std::nullopt, std::nullopt);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_NE(none.error().message.find("kiln kernels"), std::string::npos);
  // Every entry's template is valid, its default is in its space, and the
  // entry's description is the template's (the registry is given some
  // rather than building the template at every `kiln` start).
  for (const auto& k : shipped_kernels()) {
    TunableKernel t = k.kernel();
    EXPECT_TRUE(t.tmpl.space.contains(t.tmpl.space.default_config())) << k.name;
    EXPECT_FALSE(t.outputs.empty()) << k.name;
    EXPECT_EQ(k.description, t.tmpl.description) << k.name;
  }
}

TEST(ShippedKernels, CallsAreDeterministicAndShapedFromTheDims) {
  auto device = cpu::open_device(1);
  ASSERT_TRUE(device.ok());
  const ShippedKernel* gemm = find_shipped_kernel("gemm_f32");
  ASSERT_NE(gemm, nullptr);
  const ShapeDims shape{{"M", 5}, {"N", 7}, {"K", 3}};
  auto a = make_call(**device, gemm->args(DType::kF32), shape, 1);
  auto b = make_call(**device, gemm->args(DType::kF32), shape, 1);
  auto c = make_call(**device, gemm->args(DType::kF32), shape, 2);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  const Arg& A = find_arg(a->args, "A");
  EXPECT_EQ(A.tensor.shape, (std::vector<std::int64_t>{5, 3}));
  EXPECT_EQ(find_arg(a->args, "C").tensor.shape, (std::vector<std::int64_t>{5, 7}));
  EXPECT_EQ(std::get<std::int32_t>(find_arg(a->args, "K").scalar), 3);
  const auto* pa = static_cast<const float*>(A.data);
  const auto* pb = static_cast<const float*>(find_arg(b->args, "A").data);
  const auto* pc = static_cast<const float*>(find_arg(c->args, "A").data);
  const auto* pB = static_cast<const float*>(find_arg(a->args, "B").data);
  bool seed_matters = false, name_matters = false;
  for (int i = 0; i < 15; ++i) {
    EXPECT_EQ(pa[i], pb[i]) << "same seed, same data";
    EXPECT_GE(pa[i], -1.0f);
    EXPECT_LT(pa[i], 1.0f);
    seed_matters |= pa[i] != pc[i];
    name_matters |= pa[i] != pB[i];
  }
  EXPECT_TRUE(seed_matters);
  EXPECT_TRUE(name_matters);
  for (int i = 0; i < 35; ++i)
    EXPECT_EQ(static_cast<const float*>(find_arg(a->args, "C").data)[i], 0.0f);
}

TEST(ShippedKernels, InPlaceRmsNormEqualsOneCleanRunAfterTuningAndOnACacheHit) {
  auto target = open_tuning_target("cpu");
  ASSERT_TRUE(target.ok()) << target.error().describe();
  Device& device = *target->device;
  const ShippedKernel* k = find_shipped_kernel("fused_add_rmsnorm");
  ASSERT_NE(k, nullptr);
  const ShapeDims shape{{"rows", 12}, {"hidden", 200}};
  const auto specs = k->args(DType::kF32);

  // One clean run: the host reference on a second copy of the same data.
  auto want = make_call(device, specs, shape, 7);
  ASSERT_TRUE(want.ok());
  ASSERT_TRUE(k->reference(device, want->args).ok());
  auto check = [&](const KernelCall& got, const char* when) {
    for (const char* name : {"x", "residual"}) {
      const auto* g = static_cast<const float*>(find_arg(got.args, name).data);
      const auto* w = static_cast<const float*>(find_arg(want->args, name).data);
      for (int i = 0; i < 12 * 200; ++i)
        ASSERT_NEAR(g[i], w[i], 1e-5 + 1e-4 * std::fabs(w[i])) << when << " " << name << " " << i;
    }
  };

  Options opts = Options::global();
  opts.cache_dir = std::filesystem::temp_directory_path() /
                   ("kiln_shipped_rmsnorm_" + std::to_string(::getpid()));
  std::filesystem::remove_all(opts.cache_dir);
  ArtifactCache artifacts(opts);
  TuningCache tunings(opts);
  TuneOptions o;
  o.search.strategy = "exhaustive";  // the first 4 in enumeration order
  o.search.max_configs = 4;
  o.check.reference = ReferenceKind::kUser;
  o.check.reference_fn = k->reference;
  o.check.tolerance = k->tolerance(shape);
  {
    auto call = make_call(device, specs, shape, 7);
    ASSERT_TRUE(call.ok());
    Autotuner tuner(target->backend, &artifacts, &tunings);
    auto r = tuner.run(k->kernel(), call->args, device, o);  // tunes, then one real call
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(r->source, ResultSource::kTuned);
    EXPECT_EQ(r->stats.benchmarked, 4u);
    check(*call, "after tuning");
  }
  auto call = make_call(device, specs, shape, 7);
  ASSERT_TRUE(call.ok());
  Autotuner warm(target->backend, &artifacts, &tunings);
  auto hit = warm.run(k->kernel(), call->args, device, o);
  ASSERT_TRUE(hit.ok()) << hit.error().describe();
  EXPECT_EQ(hit->source, ResultSource::kDisk);
  check(*call, "on a cache hit");
  std::filesystem::remove_all(opts.cache_dir);
}

// Every config of the CPU softmax (streaming stores or not, 1-8 rows a
// block, 1-4 accumulators, the next row prefetched or not) computes the
// double-precision reference, on rows that are no multiple of a vector's
// 8 or 16 floats and a row count no multiple of 8.
TEST(ShippedKernels, EveryCpuSoftmaxConfigMatchesTheReference) {
  auto target = open_tuning_target("cpu");
  ASSERT_TRUE(target.ok()) << target.error().describe();
  Device& device = *target->device;
  const ShippedKernel* k = find_shipped_kernel("softmax_f32");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->family, "softmax");
  const ShapeDims shape{{"rows", 13}, {"cols", 203}};
  auto call = make_call(device, k->args(DType::kF32), shape, 3);
  ASSERT_TRUE(call.ok());
  Options opts = Options::global();
  opts.cache_dir = std::filesystem::temp_directory_path() /
                   ("kiln_shipped_softmax_" + std::to_string(::getpid()));
  std::filesystem::remove_all(opts.cache_dir);
  ArtifactCache artifacts(opts);
  TuningCache tunings(opts);
  TuneOptions o;
  o.search.strategy = "exhaustive";
  o.check.reference = ReferenceKind::kUser;
  o.check.reference_fn = k->reference;
  o.check.tolerance = k->tolerance(shape);
  Autotuner tuner(target->backend, &artifacts, &tunings);
  auto r = tuner.run(k->kernel(), call->args, device, o);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->stats.benchmarked, 42u);  // 48, less PF=1 with ROWS=1
  for (const auto& m : r->measurements)
    EXPECT_EQ(m.outcome, Outcome::kOk) << m.config.to_string() << ": " << m.error.describe();
  // The winner's own call left y = softmax(x): each row sums to 1.
  const auto* y = static_cast<const float*>(find_arg(call->args, "y").data);
  for (int row = 0; row < 13; ++row) {
    double sum = 0;
    for (int j = 0; j < 203; ++j) sum += y[row * 203 + j];
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << row;
  }
  std::filesystem::remove_all(opts.cache_dir);
}

}  // namespace
}  // namespace kiln
