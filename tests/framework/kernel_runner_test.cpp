// KernelRunner on the CPU backend: real Clang compiles and LLVM ORC loads.
// Tactics come from the kernel's config space; choose_one tunes a Kiln
// kernel against a plain C++ reference over dynamic row buckets, compiling
// each config once; a second tuner is served from disk without compiling.
#include <gtest/gtest.h>

#include <cmath>

#include "framework_test_util.hpp"
#include "kiln/backends/cpu.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/framework/backend_select.hpp"
#include "kiln/framework/kernel_runner.hpp"
#include "kiln/framework/tuning_scope.hpp"
#include "kiln/kernels/tuning_target.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

// y[r, :] = x[r, :] * w[:], ROWS rows per block, VEC-wide inner steps.
constexpr const char* kRowScale = R"(
#include "kiln/cpu_kernel.h"
namespace t {
template <int ROWS, int VEC>
void row_scale(const kiln::cpu::BlockContext& ctx, const float* x, const float* w, float* y,
               int rows, int cols) {
  const int r0 = static_cast<int>(ctx.block_idx.x) * ROWS;
  for (int r = r0; r < r0 + ROWS && r < rows; ++r) {
    int c = 0;
    for (; c + VEC <= cols; c += VEC)
      for (int v = 0; v < VEC; ++v) y[r * cols + c + v] = x[r * cols + c + v] * w[c + v];
    for (; c < cols; ++c) y[r * cols + c] = x[r * cols + c] * w[c];
  }
}
}  // namespace t
)";

TunableKernel row_scale_kernel() {
  TunableKernel k;
  k.tmpl.name = "row_scale_test";
  k.tmpl.source = kRowScale;
  k.tmpl.entry = "t::row_scale<{ROWS},{VEC}>";
  k.tmpl.space.param("ROWS", {1, 4}).param("VEC", {1, 4});
  k.tmpl.space.default_config(Config{{"ROWS", std::int64_t{1}}, {"VEC", std::int64_t{1}}});
  k.launch = [](const Config& c, const ArgList& args) {
    auto rows = std::get<std::int32_t>(find_arg(args, "rows").scalar);
    LaunchGeometry g;
    g.grid =
        Dim3{static_cast<std::uint32_t>((rows + c.get_int("ROWS") - 1) / c.get_int("ROWS")), 1, 1};
    return g;
  };
  // A block of more rows than the call has is pointless: pruned.
  k.early_prune = [](const Config& c, const ProblemKey& p) {
    return c.get_int("ROWS") <= p.tensors().at("x").shape[0];
  };
  return k;
}

// The op's inputs are (x, w, y); the kernel also wants the sizes.
ArgList with_sizes(const ArgList& in) {
  ArgList args = in;
  args.push_back(Arg::of_scalar("rows", static_cast<std::int32_t>(in[0].tensor.shape[0])));
  args.push_back(Arg::of_scalar("cols", static_cast<std::int32_t>(in[0].tensor.shape[1])));
  return args;
}

class Reference : public TunableRunner {
 public:
  Reference() : TunableRunner("row_scale_reference", "1") {}
  std::vector<int> tactics(const ArgList&) override { return {0}; }
  Status run(const ArgList& in, int) override {
    const auto* x = static_cast<const float*>(in[0].data);
    const auto* w = static_cast<const float*>(in[1].data);
    auto* y = static_cast<float*>(in[2].data);
    std::int64_t rows = in[0].tensor.shape[0], cols = in[0].tensor.shape[1];
    for (std::int64_t i = 0; i < rows * cols; ++i) y[i] = x[i] * w[i % cols];
    return ok_status();
  }
};

Backend cpu_backend() {
  return open_tuning_target("cpu").value().backend;
}

struct Call {
  std::vector<float> x, w, y;
  ArgList args;
  Call(std::int64_t rows, std::int64_t cols)
      : x(static_cast<std::size_t>(rows * cols)),
        w(static_cast<std::size_t>(cols)),
        y(x.size(), 0.0f) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.0f + 0.01f * static_cast<float>(i);
    args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {rows, cols})),
            Arg::of_tensor("w", w.data(), TensorArg::contiguous(DType::kF32, {cols})),
            Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {rows, cols}))};
  }
};

TEST(KernelRunner, TacticsComeFromTheConfigSpace) {
  auto device = cpu::open_device(1);
  ASSERT_TRUE(device.ok()) << device.error().describe();
  KernelRunner runner(row_scale_kernel(), cpu_backend(), **device, nullptr, with_sizes);
  EXPECT_EQ(runner.id().name, "kiln:row_scale_test");
  EXPECT_EQ(runner.id().version.size(), 16u);
  Call big(8, 32), small(2, 32);
  EXPECT_EQ(runner.tactics(big.args), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(runner.tactics(small.args), (std::vector<int>{0, 1})) << "ROWS=4 pruned";
  EXPECT_EQ(runner.describe(3), "ROWS=4,VEC=4");
  EXPECT_EQ(runner.describe(kFallbackTactic), "ROWS=1,VEC=1");
  EXPECT_THROW(runner.config_of(9), Error);
  // The fallback compiles the default config alone, and runs right.
  ASSERT_TRUE(runner.run(small.args, kFallbackTactic).ok());
  EXPECT_EQ(runner.compiled(), 1u);
  for (std::size_t i = 0; i < small.y.size(); ++i)
    ASSERT_FLOAT_EQ(small.y[i], small.x[i] * small.w[i % 32]) << i;
  // A changed template is another runner identity.
  TunableKernel changed = row_scale_kernel();
  changed.tmpl.source += "\n// changed\n";
  KernelRunner other(changed, cpu_backend(), **device, nullptr, with_sizes);
  EXPECT_NE(other.id().version, runner.id().version);
}

TEST(KernelRunner, ChooseOneTunesAKilnKernelAgainstAReference) {
  if (!Options::global().tuning) KILN_SKIP(Skip::kTuningOff) << "KILN_TUNING=0";
  auto dir = testing::fresh_dir("kernel_runner");
  Options opts = Options::global();
  opts.cache_dir = dir;
  ArtifactCache artifacts(opts);
  auto device = cpu::open_device(1);
  ASSERT_TRUE(device.ok());
  TuningSpec spec;
  spec.dynamic.push_back(DynamicDim::of(0, 0, {1, 4, 16}));
  spec.constraints.push_back({2, 0, [](auto p) { return p[0]; }});
  spec.finalize();
  Call call(11, 64);
  auto tuner_options = testing::quick_options();
  tuner_options.device = device->get();

  KernelRunner kiln_runner(row_scale_kernel(), cpu_backend(), **device, &artifacts, with_sizes);
  Reference reference;
  TunableRunner* runners[] = {&kiln_runner, &reference};
  Choice c;
  {
    TacticTuner tuner(tuner_options);
    TuningScopeOptions so;
    so.cache_path = dir / "tactics.json";
    so.rank = -1;
    TuningScope scope(tuner, so);
    c = tuner.choose_one("row_scale", runners, call.args, spec);
    EXPECT_EQ(c.source, ChoiceSource::kTuned);
    EXPECT_EQ(tuner.stats().tuned_profiles, 3u);
    // 3 profiles: 2 + 4 + 4 kernel tactics and the reference's 1 each.
    EXPECT_EQ(tuner.stats().profiled, 13u);
    EXPECT_EQ(tuner.stats().failed, 0u);
  }
  EXPECT_EQ(kiln_runner.compiled(), 4u) << "each config compiled once across the profiles";
  ASSERT_TRUE(c.run(call.args).ok());
  for (std::size_t i = 0; i < call.y.size(); ++i)
    ASSERT_FLOAT_EQ(call.y[i], call.x[i] * call.w[i % 64]) << i;

  // Kiln's kernel and the reference agree, tactic by tactic.
  std::vector<ValidationCandidate> cands = {{"reference", &reference, 0}};
  for (int t : kiln_runner.tactics(call.args))
    cands.push_back({"kiln " + kiln_runner.describe(t), &kiln_runner, t});
  auto report = validate_backends(cands, call.args, {"y"}, Tolerance{});
  EXPECT_TRUE(report.ok()) << report.describe();

  // A new tuner and runner (as in the next process): the decision comes
  // from the file, the kernel from the artifact cache; nothing compiles.
  KernelRunner warm(row_scale_kernel(), cpu_backend(), **device, &artifacts, with_sizes);
  TunableRunner* warm_runners[] = {&warm, &reference};
  TacticTuner tuner(tuner_options);
  TuningScopeOptions so;
  so.tune = false;
  so.cache_path = dir / "tactics.json";
  so.rank = -1;
  TuningScope scope(tuner, so);
  Choice again = tuner.choose_one("row_scale", warm_runners, call.args, spec);
  EXPECT_EQ(again.source, ChoiceSource::kDisk);
  EXPECT_EQ(again.runner_index, c.runner_index);
  EXPECT_EQ(again.tactic, c.tactic);
  ASSERT_TRUE(again.run(call.args).ok());
  EXPECT_EQ(warm.compiled(), 0u);
  std::filesystem::remove_all(dir);
}

TEST(KernelRunner, ASkippedOpCompilesNothing) {
  auto device = cpu::open_device(1);
  ASSERT_TRUE(device.ok());
  KernelRunner runner(row_scale_kernel(), cpu_backend(), **device, nullptr, with_sizes);
  Reference reference;
  TunableRunner* runners[] = {&runner, &reference};
  TacticTuner tuner(testing::quick_options());
  Call call(4, 16);
  TuningScope tuning(true);
  SkipScope skip("row_scale");
  Choice c = tuner.choose_one("row_scale", runners, call.args);
  EXPECT_EQ(c.source, ChoiceSource::kSkipped);
  EXPECT_EQ(c.runner, &runner);
  EXPECT_EQ(c.tactic, kFallbackTactic);
  EXPECT_EQ(runner.compiled(), 0u);
  EXPECT_EQ(tuner.memory_size(), 0u);
}

}  // namespace
}  // namespace kiln
