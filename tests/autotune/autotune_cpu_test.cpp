// The autotuner end to end on the CPU backend: a space with a broken, a
// wrong and a hanging config among healthy ones; warm starts from disk;
// pipeline on and off; in-place kernels with restore_value/reset_to_zero.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kiln/backends/cpu.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/tuner/tuner.hpp"
#include "tune_session.hpp"

namespace kiln {
namespace {

// MODE 0 is healthy; 1 writes a wrong result; 2 spins until released; 3
// does not compile. UNROLL changes the speed a little.
constexpr const char* kScaleSource = R"(
#include "kiln/cpu_kernel.h"
namespace t {
template <int UNROLL, int MODE>
void scale(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n, float a,
           int* release) {
  static_assert(MODE != 3, "MODE 3 is deliberately broken");
  if (MODE == 2) {
    while (__atomic_load_n(release, __ATOMIC_ACQUIRE) == 0) {
    }
  }
  const int per = (n + static_cast<int>(ctx.grid_dim.x) - 1) / static_cast<int>(ctx.grid_dim.x);
  const int lo = static_cast<int>(ctx.block_idx.x) * per;
  const int hi = lo + per < n ? lo + per : n;
  int i = lo;
  for (; i + UNROLL <= hi; i += UNROLL)
    for (int u = 0; u < UNROLL; ++u) y[i + u] = a * x[i + u] + (MODE == 1 ? 1.0f : 0.0f);
  for (; i < hi; ++i) y[i] = a * x[i] + (MODE == 1 ? 1.0f : 0.0f);
}
}  // namespace t
)";

using testing::cpu_backend;
using testing::fresh_dir;
using testing::options_for;
using testing::Session;

TunableKernel scale_kernel(std::vector<std::int64_t> modes) {
  TunableKernel k;
  k.tmpl.name = "scale_test";
  k.tmpl.source = kScaleSource;
  k.tmpl.entry = "t::scale<{UNROLL},{MODE}>";
  std::vector<Value> mode_values(modes.begin(), modes.end());
  k.tmpl.space.param("UNROLL", {1, 4}).param("MODE", mode_values);
  k.tmpl.space.default_config(Config{{"UNROLL", std::int64_t{1}}, {"MODE", std::int64_t{0}}});
  k.launch = [](const Config&, const ArgList&) {
    LaunchGeometry g;
    g.grid = Dim3{4, 1, 1};
    return g;
  };
  k.outputs = {"y"};
  return k;
}

// The `release` flag is the caller's memory, shared with a spinning config
// on purpose: a raw pointer of unknown extent, so these calls benchmark in
// threads, asked for (processes refuse such a pointer).
constexpr Isolation kThreads = Isolation::kThread;

struct ScaleCall {
  std::vector<float> x, y;
  int release = 0;
  ArgList args;
  explicit ScaleCall(int n) : x(n), y(n, 0.0f) {
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 17) * 0.5f;
    args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {n})),
            Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {n})),
            Arg::of_scalar("n", n), Arg::of_scalar("a", 2.0f, false),
            Arg::of_scalar("release", &release)};
  }
};

const Measurement* find(const TuneResult& r, std::int64_t unroll, std::int64_t mode) {
  for (const auto& m : r.measurements) {
    if (m.config.get_int("UNROLL") == unroll && m.config.get_int("MODE") == mode) return &m;
  }
  return nullptr;
}

TEST(AutotuneCpu, FailuresAreRecordedAndTheWinnerIsHealthy) {
  Session session("failures", kThreads);
  auto [dir, artifacts, tunings, device, tuner] = session.parts();

  ScaleCall call(4096);
  TuneOptions to;
  to.pipeline.bench_deadline_seconds = 1.0;
  to.pipeline.trace_path = (dir / "trace.json").string();
  auto r = tuner.tune(scale_kernel({0, 1, 2, 3}), call.args, **device, to);
  __atomic_store_n(&call.release, 1, __ATOMIC_RELEASE);  // frees the abandoned worker
  ASSERT_TRUE(r.ok()) << r.error().describe();

  EXPECT_EQ(r->source, ResultSource::kTuned);
  EXPECT_EQ(r->config.get_int("MODE"), 0);
  ASSERT_EQ(r->measurements.size(), 8u);
  for (std::int64_t unroll : {1, 4}) {
    ASSERT_NE(find(*r, unroll, 0), nullptr);
    EXPECT_TRUE(find(*r, unroll, 0)->ok()) << find(*r, unroll, 0)->reason();
    EXPECT_EQ(find(*r, unroll, 1)->outcome, Outcome::kWrongResult);
    EXPECT_NE(find(*r, unroll, 1)->reason().find("output 'y'"), std::string::npos);
    EXPECT_EQ(find(*r, unroll, 3)->outcome, Outcome::kCompileFailed);
    EXPECT_NE(find(*r, unroll, 3)->reason().find("deliberately broken"), std::string::npos)
        << find(*r, unroll, 3)->reason();
    // The compile error is kept whole, as data: its code and the compiler's
    // log and options as details, not folded into one string.
    const ErrorInfo& error = find(*r, unroll, 3)->error;
    EXPECT_EQ(error.code, ErrorCode::kCompileFailed);
    ASSERT_TRUE(error.details.count("log")) << find(*r, unroll, 3)->reason();
    EXPECT_NE(error.details.at("log").find("deliberately broken"), std::string::npos);
    EXPECT_TRUE(error.details.count("options"));
  }
  // Both hanging configs hit their deadline and were abandoned.
  EXPECT_EQ(find(*r, 1, 2)->outcome, Outcome::kTimeout);
  EXPECT_EQ(find(*r, 4, 2)->outcome, Outcome::kTimeout);
  EXPECT_EQ(r->stats.failed_by_reason.at("timeout"), 2u);
  EXPECT_EQ(r->stats.failed_by_reason.at("compile_failed"), 2u);
  EXPECT_EQ(r->stats.failed_by_reason.at("wrong_result"), 2u);
  EXPECT_EQ(r->stats.benchmarked, 2u);

  // The winner runs and is right.
  std::fill(call.y.begin(), call.y.end(), 0.0f);
  ASSERT_TRUE(r->launch(**device, scale_kernel({0}), call.args).ok());
  for (std::size_t i = 0; i < call.x.size(); ++i) ASSERT_EQ(call.y[i], 2.0f * call.x[i]) << i;

  // The trace has compile and benchmark spans.
  std::ifstream in(dir / "trace.json");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\"cat\":\"compile\""), std::string::npos);
  EXPECT_NE(text.str().find("\"cat\":\"benchmark\""), std::string::npos);
}

TEST(AutotuneCpu, WarmStartServesFromDiskWithoutCompiling) {
  auto dir = fresh_dir("warm");
  Options opts = options_for(dir);
  TunableKernel kernel = scale_kernel({0});
  ScaleCall call(2048);
  Config first;
  {
    ArtifactCache artifacts(opts);
    TuningCache tunings(opts);
    auto device = cpu::open_device(1);
    Autotuner tuner(cpu_backend(kThreads), &artifacts, &tunings);
    auto r = tuner.tune(kernel, call.args, **device);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(r->source, ResultSource::kTuned);
    first = r->config;
    // The record this run saved, as the tuning cache now holds it.
    ASSERT_TRUE(r->saved) << r->not_saved_reason;
    ASSERT_TRUE(r->record.has_value());
    EXPECT_EQ(r->record->best, first);
    EXPECT_EQ(r->record->measured.size(), r->measurements.size());
    auto stored = tunings.lookup(r->record->problem,
                                 TuningIdentity{definition_hash(kernel), r->record->device,
                                                r->record->toolchain, r->record->env});
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(stored->best, r->record->best);
    EXPECT_EQ(stored->best_time_ms, r->record->best_time_ms);
    // The same tuner again: the in-memory table.
    auto again = tuner.tune(kernel, call.args, **device);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->source, ResultSource::kMemory);
    EXPECT_EQ(again->config, first);
  }
  // New caches and tuner, as in a new process: the winner comes from disk and
  // its artifact from the artifact cache; nothing is compiled.
  ArtifactCache artifacts(opts);
  TuningCache tunings(opts);
  auto device = cpu::open_device(1);
  Autotuner tuner(cpu_backend(kThreads), &artifacts, &tunings);
  auto r = tuner.tune(kernel, call.args, **device);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->source, ResultSource::kDisk);
  EXPECT_EQ(r->config, first);
  // The record it was served from comes with it (no second lookup).
  ASSERT_TRUE(r->record.has_value());
  EXPECT_EQ(r->record->best, first);
  EXPECT_FALSE(r->record->measured.empty());
  EXPECT_EQ(r->stats.artifact_hits, 1u);
  EXPECT_EQ(r->stats.cache_hits, 1u);
  // A different problem (another size) is a miss.
  ScaleCall other(1000);
  auto miss = tuner.tune(kernel, other.args, **device);
  ASSERT_TRUE(miss.ok());
  EXPECT_EQ(miss->source, ResultSource::kTuned);
}

// retune: a problem decided in memory and on disk is measured again, its
// configs come from the artifact cache, and the new record replaces the old.
TEST(AutotuneCpu, RetuneMeasuresAgainAndReplacesTheRecord) {
  auto dir = fresh_dir("retune");
  Options opts = options_for(dir);
  TunableKernel kernel = scale_kernel({0});
  ScaleCall call(2048);
  ArtifactCache artifacts(opts);
  TuningCache tunings(opts);
  auto device = cpu::open_device(1);
  Autotuner tuner(cpu_backend(kThreads), &artifacts, &tunings);
  auto first = tuner.tune(kernel, call.args, **device);
  ASSERT_TRUE(first.ok()) << first.error().describe();
  TuneOptions retune;
  retune.cache.retune = true;
  auto again = tuner.tune(kernel, call.args, **device, retune);
  ASSERT_TRUE(again.ok()) << again.error().describe();
  EXPECT_EQ(again->source, ResultSource::kTuned)
      << "neither the in-memory table nor the disk is served";
  EXPECT_EQ(again->measurements.size(), 2u);
  EXPECT_EQ(again->stats.compiled, 0u) << "the retune compiles nothing the artifact cache held";
  EXPECT_EQ(again->stats.artifact_hits, 2u);
  EXPECT_EQ(first->stats.artifact_hits, 0u)
      << "a cold run: the default config is compiled on the pool like the others";
  EXPECT_EQ(first->stats.compiled, 2u);
  ASSERT_TRUE(again->best.has_value());
  const std::vector<TuningRecord> records = TuningCache(opts).records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_DOUBLE_EQ(records[0].best_time_ms, again->best->stats.median * 1e3)
      << "the retune's record replaced the first one, whichever was faster";
  // Without tuning a retune means nothing: the cached decision is served.
  retune.tune = false;
  auto off = tuner.tune(kernel, call.args, **device, retune);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->source, ResultSource::kMemory);
}

TEST(AutotuneCpu, PipelineOffMeasuresTheSameConfigs) {
  Session session("nopipe", kThreads);
  auto [dir, artifacts, tunings, device, tuner] = session.parts();
  ScaleCall call(2048);
  TuneOptions to;
  to.pipeline.overlap = false;
  to.pipeline.group_size = 1;
  auto r = tuner.tune(scale_kernel({0, 1}), call.args, **device, to);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->measurements.size(), 4u);
  EXPECT_EQ(r->stats.benchmarked, 2u);
  EXPECT_EQ(r->config.get_int("MODE"), 0);
  // Compile-then-benchmark: no benchmark ran while compiling.
  EXPECT_DOUBLE_EQ(r->stats.overlap_seconds, 0.0);
}

TEST(AutotuneCpu, TuningOffUsesTheDefaultWithOneCompile) {
  Session session("off", kThreads);
  auto [dir, artifacts, tunings, device, tuner] = session.parts();
  ScaleCall call(512);
  TuneOptions to;
  to.tune = false;
  auto r = tuner.tune(scale_kernel({0, 1}), call.args, **device, to);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->source, ResultSource::kUntuned);
  EXPECT_STREQ(source_name(r->source), "default");
  EXPECT_EQ(r->config, scale_kernel({0}).tmpl.space.default_config());
  EXPECT_TRUE(r->measurements.empty());
  EXPECT_FALSE(r->record.has_value());
}

// Tuning that ran but found nothing correct is not "tuning off": the
// default is served as a fallback, and says so.
TEST(AutotuneCpu, NothingCorrectServesTheDefaultAsAFallback) {
  Session session("fallback", kThreads);
  auto [dir, artifacts, tunings, device, tuner] = session.parts();
  ScaleCall call(512);
  TuneOptions to;
  // A reference no config can match (every output byte 0x40: 3.0039f):
  // every config, the default included, is wrong, and the default still builds.
  to.check.reference = ReferenceKind::kUser;
  to.check.reference_fn = [](Device& d, const ArgList& args) -> Status {
    const Arg& y = find_arg(args, "y");
    return d.fill(y.data, 0x40, y.storage_bytes());
  };
  TunableKernel kernel = scale_kernel({0, 1});
  auto r = tuner.tune(kernel, call.args, **device, to);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->source, ResultSource::kFallback);
  EXPECT_STREQ(source_name(r->source), "fallback");
  EXPECT_FALSE(r->measurements.empty());
  EXPECT_FALSE(r->best.has_value());
  EXPECT_FALSE(r->record.has_value());
  EXPECT_EQ(r->config.get_int("MODE"), 0);
}

std::string read_template(const std::string& relative) {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/templates/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(AutotuneCpu, InPlaceKernelLeavesTensorsAsOneCleanRun) {
  // residual += x; x = rmsnorm(residual) * w, in place: without
  // restore_value, every repetition would add x again.
  const int rows = 64, hidden = 256;
  TunableKernel k;
  k.tmpl.name = "fused_add_rmsnorm";
  k.tmpl.source = read_template("cpu/fused_add_rmsnorm.cpp");
  k.tmpl.entry = "kiln_cpu::fused_add_rmsnorm<{ROWS},{VEC}>";
  k.tmpl.space.param("ROWS", {1, 8}).param("VEC", {1, 8});
  k.launch = [](const Config& c, const ArgList& args) {
    LaunchGeometry g;
    int r = std::get<std::int32_t>(find_arg(args, "rows").scalar);
    g.grid =
        Dim3{static_cast<std::uint32_t>((r + c.get_int("ROWS") - 1) / c.get_int("ROWS")), 1, 1};
    return g;
  };
  k.outputs = {"x", "residual"};
  k.restore_value = {"x", "residual"};

  std::vector<float> x(rows * hidden), res(rows * hidden), w(hidden);
  for (int i = 0; i < rows * hidden; ++i) {
    x[i] = std::sin(i * 0.01f);
    res[i] = std::cos(i * 0.02f);
  }
  for (int i = 0; i < hidden; ++i) w[i] = 1.0f + 0.001f * i;
  // One clean run, by hand.
  std::vector<float> want_x = x, want_res = res;
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int j = 0; j < hidden; ++j) {
      want_res[r * hidden + j] += want_x[r * hidden + j];
      sum += double(want_res[r * hidden + j]) * want_res[r * hidden + j];
    }
    float scale = 1.0f / std::sqrt(static_cast<float>(sum / hidden) + 1e-6f);
    for (int j = 0; j < hidden; ++j)
      want_x[r * hidden + j] = want_res[r * hidden + j] * scale * w[j];
  }
  ArgList args = {
      Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {rows, hidden})),
      Arg::of_tensor("residual", res.data(), TensorArg::contiguous(DType::kF32, {rows, hidden})),
      Arg::of_tensor("weight", w.data(), TensorArg::contiguous(DType::kF32, {hidden})),
      Arg::of_scalar("rows", rows),
      Arg::of_scalar("hidden", hidden),
      Arg::of_scalar("eps", 1e-6f, false)};

  Session session("inplace");
  auto [dir, artifacts, tunings, device, tuner] = session.parts();
  auto check = [&](const char* when) {
    for (int i = 0; i < rows * hidden; ++i) {
      ASSERT_NEAR(res[i], want_res[i], 1e-5f) << when << " residual " << i;
      ASSERT_NEAR(x[i], want_x[i], 1e-4f) << when << " x " << i;
    }
  };
  std::vector<float> x0 = x, res0 = res;
  auto r = tuner.run(k, args, **device);  // tunes, restores, then one real run
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->source, ResultSource::kTuned);
  EXPECT_EQ(r->stats.benchmarked, 4u) << "every config agrees with the default";
  check("after tuning");
  // A cache hit in a fresh tuner: one run, same result.
  x = x0;
  res = res0;
  Autotuner warm(cpu_backend(), &artifacts, &tunings);
  auto hit = warm.run(k, args, **device);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit->source, ResultSource::kDisk);
  check("on a cache hit");
}

TEST(AutotuneCpu, ResetToZeroZeroesOnEveryRunAndTheRealCall) {
  // An accumulating kernel: y += a*x. reset_to_zero makes each run start
  // from zero, so tuning repetitions do not pile up.
  TunableKernel k = scale_kernel({0});
  k.tmpl.source = std::string(kScaleSource);
  k.tmpl.name = "accumulate_test";
  std::string src = k.tmpl.source;
  src.replace(src.find("y[i + u] = a"), 12, "y[i + u] += a");
  src.replace(src.find("y[i] = a"), 8, "y[i] += a");
  k.tmpl.source = src;
  k.reset_to_zero = {"y"};
  Session session("reset", kThreads);
  auto [dir, artifacts, tunings, device, tuner] = session.parts();
  ScaleCall call(1024);
  std::fill(call.y.begin(), call.y.end(), 123.0f);
  auto r = tuner.run(k, call.args, **device);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->stats.benchmarked, 2u);
  for (std::size_t i = 0; i < call.x.size(); ++i) ASSERT_EQ(call.y[i], 2.0f * call.x[i]) << i;
}

// An interrupt (TuneOptions::pipeline.interrupted: Python's Ctrl-C) stops
// the run at the tuner's next check: kCancelled, nothing saved, so the next
// call tunes again rather than serving a winner of part of the space.
TEST(AutotuneCpu, AnInterruptedRunSavesNothingAndTheNextCallTunesAgain) {
  Session session("interrupted", kThreads);
  auto [dir, artifacts, tunings, device, tuner] = session.parts();
  ScaleCall call(512);
  TuneOptions to;
  to.pipeline.group_size = 1;
  std::atomic<int> asked{0};
  // Pressed from the first check on: that comes as the compiles start,
  // long before the first config could be measured.
  to.pipeline.interrupted = [&asked] { return ++asked >= 1; };
  auto r = tuner.tune(scale_kernel({0, 1}), call.args, **device, to);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
  EXPECT_NE(r.error().message.find("interrupted"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("no winner was saved"), std::string::npos) << r.error().message;
  EXPECT_EQ(asked.load(), 1) << "not asked again once it said so";
  EXPECT_TRUE(tunings.records().empty());
  auto again = tuner.tune(scale_kernel({0, 1}), call.args, **device);
  ASSERT_TRUE(again.ok()) << again.error().describe();
  EXPECT_EQ(again->source, ResultSource::kTuned);
}

TEST(AutotuneCpu, BudgetCancelsWhatIsLeft) {
  Session session("budget", kThreads);
  auto [dir, artifacts, tunings, device, tuner] = session.parts();
  ScaleCall call(512);
  TuneOptions to;
  to.pipeline.budget_seconds = 1e-6;  // spent at once
  to.pipeline.group_size = 1;
  auto r = tuner.tune(scale_kernel({0, 1}), call.args, **device, to);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->measurements.size(), 4u) << "every config is accounted for";
  EXPECT_GE(r->stats.failed_by_reason["cancelled"], 1u);
}

}  // namespace
}  // namespace kiln
