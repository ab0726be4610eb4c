// Raw pointer arguments with their extent (Arg::of_pointer) are benchmarked
// in worker processes like tensors: each worker measures on its own copy,
// so a config that scribbles and segfaults, or hangs, never touches the
// caller's memory nor ends this process; restore_value and reset_to_zero
// apply to them, and the caller's memory ends as one clean run leaves it.
// A raw pointer of unknown extent is the call's error, never a silent fall
// back to threads.
#include <cstdio>

#include "reliability_util.hpp"
#include "sanitized.hpp"

namespace kiln {
namespace {

using namespace kiln::test;

// y += a * x, and one count per block in *hits. MODE 0 is healthy; 2
// scribbles on y and then writes through a null pointer (SIGSEGV); 3
// scribbles and spins forever.
const std::string kPointerSource = R"(
#include "kiln/cpu_kernel.h"
namespace t {
template <int UNROLL, int MODE>
void acc(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n, float a, int* hits) {
  if (MODE == 2 && ctx.block_idx.x == 1) {
    y[0] = 999.0f;
    // ctx.shared is null without dynamic shared memory: a real null write.
    static_cast<volatile float*>(ctx.shared)[0] = 1.0f;
  }
  volatile int forever = 1;
  if (MODE == 3) {
    y[1] = 999.0f;
    while (forever) {
    }
  }
  __atomic_fetch_add(hits, 1, __ATOMIC_RELAXED);
  const int per = (n + static_cast<int>(ctx.grid_dim.x) - 1) / static_cast<int>(ctx.grid_dim.x);
  const int lo = static_cast<int>(ctx.block_idx.x) * per;
  const int hi = lo + per < n ? lo + per : n;
  int i = lo;
  for (; i + UNROLL <= hi; i += UNROLL)
    for (int u = 0; u < UNROLL; ++u) y[i + u] += a * x[i + u];
  for (; i < hi; ++i) y[i] += a * x[i];
}
}  // namespace t
)";

TunableKernel pointer_kernel(std::vector<std::int64_t> modes) {
  TunableKernel k;
  k.tmpl.name = "pointer_acc";
  k.tmpl.source = kPointerSource;
  k.tmpl.entry = "t::acc<{UNROLL},{MODE}>";
  std::vector<Value> mode_values(modes.begin(), modes.end());
  k.tmpl.space.param("UNROLL", {1, 4}).param("MODE", mode_values);
  // Each fault once (at UNROLL 1); two healthy configs.
  k.tmpl.space.constraint("faults_once", [](const Config& c) {
    return c.get_int("UNROLL") == 1 || c.get_int("MODE") == 0;
  });
  k.tmpl.space.default_config(Config{{"UNROLL", std::int64_t{1}}, {"MODE", std::int64_t{0}}});
  k.launch = four_blocks;
  k.restore_value = {"y"};
  k.reset_to_zero = {"hits"};
  return k;
}

// Every array a raw pointer with its extent; y starts at 1, hits at 7.
struct PointerCall {
  std::vector<float> x, y;
  int hits = 7;
  ArgList args;
  explicit PointerCall(int n) : x(n), y(n, 1.0f) {
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 13) * 0.25f;
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
    args = {Arg::of_pointer("x", x.data(), bytes), Arg::of_pointer("y", y.data(), bytes),
            Arg::of_scalar("n", n), Arg::of_scalar("a", 3.0f, false),
            Arg::of_pointer("hits", &hits, sizeof hits)};
  }
  // One clean run: y = 1 + a*x once, hits zeroed and counted by 4 blocks.
  void expect_one_clean_run() const {
    EXPECT_EQ(hits, 4);
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], 1.0f + 3.0f * x[i]) << i;
  }
};

TEST(RawPointers, ACrashingAndAHangingConfigCostOnlyTheirWorkerProcess) {
  Scratch s("rawptr_faults");
  Autotuner tuner(cpu_backend(Isolation::kProcess), &s.artifacts, &s.tunings);
  PointerCall call(4096);
  const std::vector<float> x0 = call.x;
  TuneOptions to;
  to.pipeline.bench_deadline_seconds = 1.5;
  to.pipeline.group_size = 1;
  to.pipeline.trace_path = (s.dir / "trace.json").string();
  const TunableKernel k = pointer_kernel({0, 2, 3});
  auto r = tuner.tune(k, call.args, *s.device, to);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  for (const auto& m : r->measurements) {
    std::printf("  {%s}: %s %s\n", m.config.to_string().c_str(), outcome_name(m.outcome),
                m.reason().substr(0, 240).c_str());
  }

  ASSERT_EQ(r->measurements.size(), 4u);
  EXPECT_EQ(r->source, ResultSource::kTuned);
  EXPECT_EQ(r->config.get_int("MODE"), 0) << "the winner is a healthy config";
  for (std::int64_t unroll : {1, 4}) {
    ASSERT_NE(find_mode(*r, unroll, 0), nullptr);
    EXPECT_TRUE(find_mode(*r, unroll, 0)->ok()) << find_mode(*r, unroll, 0)->reason();
  }
  const Measurement* segv = find_mode(*r, 1, 2);
  ASSERT_NE(segv, nullptr);
  EXPECT_EQ(segv->outcome, Outcome::kCrashed) << segv->reason();
#if defined(KILN_TEST_SANITIZED)
  EXPECT_TRUE(segv->reason().find("SIGABRT") != std::string::npos ||
              segv->reason().find("exited with status") != std::string::npos)
      << segv->reason();
#else
  EXPECT_NE(segv->reason().find("SIGSEGV"), std::string::npos) << segv->reason();
#endif
  const Measurement* spin = find_mode(*r, 1, 3);
  ASSERT_NE(spin, nullptr);
  EXPECT_EQ(spin->outcome, Outcome::kTimeout) << spin->reason();
  EXPECT_NE(spin->reason().find("deadline of 1.5 s"), std::string::npos) << spin->reason();
  EXPECT_NE(read_text(s.dir / "trace.json").find("bench 0 (cpu, process)"), std::string::npos);

  // The workers measured on their copies: the caller's memory is as it was
  // (the scribbles and every benchmark run went elsewhere).
  EXPECT_EQ(call.x, x0);
  EXPECT_EQ(call.hits, 7);
  for (float v : call.y) ASSERT_EQ(v, 1.0f);
  // The winner's real call: hits reset, y accumulated once.
  ASSERT_TRUE(r->launch(*s.device, k, call.args).ok());
  call.expect_one_clean_run();
  s.expect_caches_clean(1);
}

// Every placement handles sized raw pointers alike: restore_value and
// reset_to_zero apply to them, and run() leaves one clean run.
TEST(RawPointers, InPlacePointersEndAsOneCleanRunWhereverBenchmarksRun) {
  struct Placement {
    const char* name;
    Isolation isolation;
    bool own_devices;
  };
  for (const Placement& p : {Placement{"threads on the caller's device", Isolation::kThread, false},
                             Placement{"threads on replicas", Isolation::kThread, true},
                             Placement{"processes", Isolation::kProcess, false},
                             Placement{"auto", Isolation::kAuto, false}}) {
    SCOPED_TRACE(p.name);
    Scratch s("rawptr_inplace");
    Backend b = cpu_backend(p.isolation);
    if (p.own_devices) b.bench.open_device = [](int) { return cpu::open_device(1); };
    Autotuner tuner(b, &s.artifacts, &s.tunings);
    PointerCall call(2048);
    TuneOptions to;
    to.measure.min_reps = 5;  // several runs per config: each must start from the snapshot
    to.pipeline.trace_path = (s.dir / "trace.json").string();
    auto r = tuner.run(pointer_kernel({0}), call.args, *s.device, to);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(r->stats.benchmarked, 2u);
    call.expect_one_clean_run();
    const bool processes = p.isolation != Isolation::kThread;
    EXPECT_EQ(read_text(s.dir / "trace.json").find("(cpu, process)") != std::string::npos,
              processes);
  }
}

// A raw pointer without its extent cannot be copied to a worker: an error
// naming it and the fixes, for kAuto as for kProcess, before anything runs;
// threads only when asked for.
TEST(RawPointers, AnUnknownExtentIsAnErrorNotAFallBackToThreads) {
  for (Isolation iso : {Isolation::kAuto, Isolation::kProcess, Isolation::kThread}) {
    SCOPED_TRACE(iso == Isolation::kAuto      ? "auto"
                 : iso == Isolation::kProcess ? "process"
                                              : "thread");
    Scratch s("rawptr_unknown");
    Autotuner tuner(cpu_backend(iso), &s.artifacts, &s.tunings);
    PointerCall call(256);
    call.args.back() = Arg::of_scalar("hits", &call.hits);
    TunableKernel k = pointer_kernel({0});
    k.reset_to_zero.clear();
    auto r = tuner.tune(k, call.args, *s.device);
    if (iso == Isolation::kThread) {
      ASSERT_TRUE(r.ok()) << r.error().describe();
      EXPECT_EQ(r->source, ResultSource::kTuned);
      continue;
    }
    ASSERT_FALSE(r.ok()) << "a pointer of unknown size was benchmarked";
    const ErrorInfo& e = r.error();
    EXPECT_EQ(e.code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(e.details.at("argument"), "hits");
    for (const char* part : {"'hits'", "Arg::of_pointer", "Isolation::kThread", "tensor"}) {
      EXPECT_NE(e.message.find(part), std::string::npos) << part << " in: " << e.message;
    }
    EXPECT_EQ(call.hits, 7) << "a config ran although the call was refused";
    EXPECT_EQ(TuningCache(s.opts).records().size(), 0u);
  }
}

// The lists name what can be copied: a pointer of unknown extent cannot be
// restored or zeroed, and outputs (compared by element) must be tensors.
TEST(RawPointers, ListsRefuseWhatTheyCannotCopyOrCompare) {
  Scratch s("rawptr_lists");
  Autotuner tuner(cpu_backend(Isolation::kThread), &s.artifacts, &s.tunings);
  PointerCall call(256);
  call.args.back() = Arg::of_scalar("hits", &call.hits);
  TunableKernel k = pointer_kernel({0});
  try {
    (void)tuner.tune(k, call.args, *s.device);
    FAIL() << "reset_to_zero of a pointer of unknown extent was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'hits', a raw pointer of unknown extent"),
              std::string::npos)
        << e.what();
  }
  PointerCall sized(256);
  k.outputs = {"y"};
  try {
    (void)tuner.tune(k, sized.args, *s.device);
    FAIL() << "a raw pointer was accepted as an output";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("give it as a tensor"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
