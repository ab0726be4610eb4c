// A framework-style op on Kiln's tuning API. An inference framework owns
// several implementations of RMSNorm and calls the op with a batch whose
// token count changes on every call. This example registers two backends
// (a Kiln CPU kernel template, whose configs become tactics, and a plain
// C++ reference), declares the token dimension dynamic with power-of-two
// buckets, tunes every bucket once inside a TuningScope that persists the
// decisions, then serves calls of any token count from the nearest bucket
// with no tuning; finally it checks the backends agree and replays every
// (runner, tactic) so each kernel is exercised.
#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "kiln/framework/backend_select.hpp"
#include "kiln/framework/capture.hpp"
#include "kiln/framework/kernel_runner.hpp"
#include "kiln/framework/tuning_scope.hpp"
#include "kiln/kernels/tuning_target.hpp"

using namespace kiln;

// (1) The Kiln kernel: y[t] = x[t] / rms(x[t]) * w, ROWS tokens per block,
// VEC partial sums (a config space of 2 x 2 tactics).
constexpr const char* kRmsNorm = R"(
#include "kiln/cpu_kernel.h"
template <int ROWS, int VEC>
void rms_norm(const kiln::cpu::BlockContext& ctx, const float* x, const float* w, float* y,
              int tokens, int hidden) {
  for (int t = ctx.block_idx.x * ROWS; t < (int)(ctx.block_idx.x + 1) * ROWS && t < tokens; ++t) {
    float part[VEC] = {};
    for (int i = 0; i < hidden; ++i) part[i % VEC] += x[t * hidden + i] * x[t * hidden + i];
    float sum = 0;
    for (int v = 0; v < VEC; ++v) sum += part[v];
    const float scale = 1.0f / __builtin_sqrtf(sum / hidden + 1e-6f);
    for (int i = 0; i < hidden; ++i) y[t * hidden + i] = x[t * hidden + i] * scale * w[i];
  }
})";

// The plain C++ reference: one tactic, runs anything.
class Reference : public TunableRunner {
 public:
  Reference() : TunableRunner("rms_norm_reference", "1") {}
  std::vector<int> tactics(const ArgList&) override { return {0}; }
  Status run(const ArgList& in, int) override {
    auto x = static_cast<const float*>(in[0].data), w = static_cast<const float*>(in[1].data);
    auto y = static_cast<float*>(in[2].data);
    std::int64_t tokens = in[0].tensor.shape[0], hidden = in[0].tensor.shape[1];
    for (std::int64_t t = 0; t < tokens; ++t) {
      double sum = 0;
      for (std::int64_t i = 0; i < hidden; ++i)
        sum += double(x[t * hidden + i]) * x[t * hidden + i];
      float scale = 1.0f / std::sqrt(float(sum / hidden) + 1e-6f);
      for (std::int64_t i = 0; i < hidden; ++i)
        y[t * hidden + i] = x[t * hidden + i] * scale * w[i];
    }
    return ok_status();
  }
};

int main() {
  TuningTarget cpu = open_tuning_target("cpu").value();  // Clang + the host
  Device* device = cpu.device.get();
  TunableKernel kernel;
  kernel.tmpl.name = "rms_norm_example";
  kernel.tmpl.source = kRmsNorm;
  kernel.tmpl.entry = "rms_norm<{ROWS},{VEC}>";
  kernel.tmpl.space.param("ROWS", {1, 4}).param("VEC", {1, 8});
  kernel.launch = [](const Config& c, const ArgList& a) {
    auto tokens = std::get<std::int32_t>(find_arg(a, "tokens").scalar);
    LaunchGeometry g;
    g.grid.x = std::uint32_t((tokens + c.get_int("ROWS") - 1) / c.get_int("ROWS"));
    return g;
  };
  auto with_sizes = [](const ArgList& in) {  // the op's tensors -> the kernel's arguments
    ArgList a = in;
    a.push_back(Arg::of_scalar("tokens", std::int32_t(in[0].tensor.shape[0])));
    a.push_back(Arg::of_scalar("hidden", std::int32_t(in[0].tensor.shape[1])));
    return a;
  };

  // (2) The auto backend: each backend with its support check, Kiln's first.
  AutoBackend rms_norm("rms_norm");
  BackendSpec kiln_spec, reference_spec;
  kiln_spec.name = "kiln_cpu";
  kiln_spec.make = [&] {
    return std::make_shared<KernelRunner>(kernel, cpu.backend, *device, nullptr, with_sizes);
  };
  kiln_spec.supports = [](const SupportQuery& q) {
    return q.inputs[0].tensor.shape[1] <= 8192 ? std::string() : "hidden above 8192";
  };
  kiln_spec.priority = [](const SupportQuery&) { return 1.0; };
  reference_spec.name = "reference";
  reference_spec.make = [] { return std::make_shared<Reference>(); };
  rms_norm.add(kiln_spec).add(reference_spec);

  // (3) The token dimension is dynamic: buckets 1, 2, 4, ... capped at 256;
  // the output's token count follows the input's.
  TuningSpec spec;
  spec.dynamic.push_back(DynamicDim::of(0, 0, power_of_two_buckets(1, 4096)));
  spec.constraints.push_back({2, 0, [](auto profile) { return profile[0]; }});
  spec.max_bucket = 256;
  spec.finalize();

  const std::int64_t hidden = 512;
  std::vector<float> x(300 * hidden), w(hidden), y(x.size()), ref(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.01f * float(i));
  for (std::int64_t i = 0; i < hidden; ++i) w[i] = 1.0f + 0.001f * float(i);
  auto inputs = [&](std::int64_t tokens, float* out) {
    return ArgList{
        Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {tokens, hidden})),
        Arg::of_tensor("w", w.data(), TensorArg::contiguous(DType::kF32, {hidden})),
        Arg::of_tensor("y", out, TensorArg::contiguous(DType::kF32, {tokens, hidden}))};
  };

  // (4) Warm-up inside a tuning scope: the first call tunes every bucket
  // across both backends and the scope saves the decisions at its end.
  auto dir = std::filesystem::temp_directory_path() / ("kiln_example_" + std::to_string(getpid()));
  TacticTunerOptions tuner_options;
  tuner_options.device = device;
  tuner_options.check_outputs = {"y"};  // a tactic that disagrees is never chosen
  tuner_options.tolerance.min_cosine = 0.99999;
  TacticTuner tuner(tuner_options);
  {
    TuningScopeOptions scope_options;
    scope_options.cache_path = dir / "rms_norm_tactics.json";
    TuningScope tuning(tuner, scope_options);
    Choice c = rms_norm.choose(tuner, inputs(7, y.data()), spec);
    std::printf("tuned %llu token buckets; 7 tokens -> %s tactic %d (%s)\n",
                (unsigned long long)tuner.stats().tuned_profiles, c.runner->id().name.c_str(),
                c.tactic, c.runner->describe(c.tactic).c_str());
  }

  // (5) Serving: any token count maps to its nearest bucket; no tuning.
  for (std::int64_t tokens : {1, 3, 100, 300}) {
    Choice c = rms_norm.choose(tuner, inputs(tokens, y.data()), spec);
    if (c.source != ChoiceSource::kMemory || !c.run(inputs(tokens, y.data())).ok()) return 1;
    std::printf("%3lld tokens -> %s tactic %d\n", (long long)tokens, c.runner->id().name.c_str(),
                c.tactic);
  }

  // (6) Cross-backend validation, then a replay of every (runner, tactic).
  Capture capture;
  {
    CaptureScope scope(capture);
    rms_norm.choose(tuner, inputs(300, y.data()), spec);
  }
  Reference reference;
  Tolerance cosine{.atol = 0, .rtol = 0, .min_cosine = 0.99999};
  Status all = replay_all(capture, [&]() -> Status {
    Choice c = rms_norm.choose(tuner, inputs(300, y.data()), spec);
    auto report = validate_backends({{"reference", &reference, 0}, {"chosen", c.runner, c.tactic}},
                                    inputs(300, ref.data()), {"y"}, cosine);
    if (!report.ok()) return make_error(ErrorCode::kInternal, report.describe());
    return ok_status();
  });
  std::filesystem::remove_all(dir);
  std::printf("replayed %llu (runner, tactic) pairs against the reference: %s\n",
              (unsigned long long)capture.combinations(), all.ok() ? "all agree" : "MISMATCH");
  if (!all.ok()) std::printf("%s\n", all.error().describe().c_str());
  return all.ok() ? 0 : 1;
}
