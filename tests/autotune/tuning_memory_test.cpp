// How a tuning behaves across tunings, end to end on the CPU backend (real
// Clang compiles, real kernels, real timings): a config that failed once is
// not compiled again when the problem is tuned again with a larger budget;
// finalists are measured again and a lucky early measurement does not win;
// the winner of a neighbouring shape is measured first. Kernels sleep
// rather than spin (a sleep's length hardly depends on the machine's load),
// and the times differ by 25% or more, so assertions are on behaviour.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "tune_session.hpp"

namespace kiln {
namespace {

using testing::Session;

// V = 3 does not compile: the failure a rerun must not pay for again.
constexpr const char* kBrokenSource = R"(
#include "kiln/cpu_kernel.h"
namespace t {
template <int V>
void scale(const kiln::cpu::BlockContext&, const float* x, float* y, int n) {
  static_assert(V != 3, "V = 3 is broken");
  for (int i = 0; i < n; ++i) y[i] = x[i] * 2.0f;
}
}  // namespace t
)";

// One parameter `param` over `values`, the first the default; one block,
// output y. `source` may add parameters (then set the space after).
TunableKernel one_block(std::string name, std::string source, std::string entry,
                        const std::string& param, std::vector<std::int64_t> values) {
  TunableKernel k;
  k.tmpl.name = std::move(name);
  k.tmpl.source = std::move(source);
  k.tmpl.entry = std::move(entry);
  std::vector<Value> v(values.begin(), values.end());
  k.tmpl.space.param(param, v);
  k.tmpl.space.default_config(Config{{param, values.front()}});
  k.launch = [](const Config&, const ArgList&) { return LaunchGeometry{}; };
  k.outputs = {"y"};
  return k;
}

TunableKernel broken_kernel() {
  return one_block("tuning_memory_broken", kBrokenSource, "t::scale<{V}>", "V", {1, 2, 3, 4});
}

struct Call {
  std::vector<float> x, y;
  ArgList args;
  explicit Call(int n, int unit_us = 0) : x(n, 1.5f), y(n, 0.0f) {
    args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {n})),
            Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {n})),
            Arg::of_scalar("n", n)};
    if (unit_us > 0) args.push_back(Arg::of_scalar("unit", unit_us, false));
  }
};

const Measurement* find(const TuneResult& r, const std::string& name, std::int64_t v) {
  for (const auto& m : r.measurements)
    if (m.config.get_int(name) == v) return &m;
  return nullptr;
}

// Short timings: a millisecond of kernel time, `max_reps` at most.
TuneOptions quick(int max_reps) {
  TuneOptions o;
  o.measure.target_seconds = 0.001;
  o.measure.max_reps = max_reps;
  return o;
}

TuneOptions exhaustive(std::size_t max_configs) {
  TuneOptions o = quick(5);
  o.search.strategy = "exhaustive";
  o.search.max_configs = max_configs;
  return o;
}

// The tuning records on disk of `s`, removed: the failures beside them
// stay, as after a record lost to a prune or a partial copy of a cache.
void remove_records(const Session& s) {
  for (const auto& e : std::filesystem::directory_iterator(s.dir / "tuning"))
    if (e.is_regular_file() && e.path().extension() == ".json") std::filesystem::remove(e.path());
}

TEST(TuningMemory, ARerunSkipsWhatFailedBeforeAndARetuneMeasuresItAgain) {
  Session s("memory_failures");
  ASSERT_TRUE(s.device.ok());
  Call call(256);
  // (1) Three configs: the default, V = 2 and the broken V = 3.
  auto first = s.tuner.tune(broken_kernel(), call.args, **s.device, exhaustive(3));
  ASSERT_TRUE(first.ok()) << first.error().describe();
  const Measurement* broken = find(*first, "V", 3);
  ASSERT_NE(broken, nullptr);
  EXPECT_EQ(broken->outcome, Outcome::kCompileFailed);
  EXPECT_EQ(first->stats.skipped_failed_before, 0u);
  // (2) Again with the whole space in a new process's worth of Kiln whose
  // record is gone: V = 3 is neither compiled nor measured, and the result
  // lists it with what was remembered.
  remove_records(s);
  TuningCache tunings(s.opts);
  Autotuner tuner(testing::cpu_backend(), &s.artifacts, &tunings);
  auto second = tuner.tune(broken_kernel(), call.args, **s.device, exhaustive(0));
  ASSERT_TRUE(second.ok()) << second.error().describe();
  EXPECT_EQ(second->source, ResultSource::kTuned);
  EXPECT_EQ(find(*second, "V", 3), nullptr) << "compiled again";
  EXPECT_NE(find(*second, "V", 4), nullptr) << "the larger budget measures what is new";
  EXPECT_EQ(second->stats.skipped_failed_before, 1u);
  EXPECT_EQ(second->stats.failed, 0u);
  EXPECT_EQ(second->measurements.size(), 3u);
  EXPECT_EQ(second->stats.compiled + second->stats.artifact_hits, 3u)
      << "V = 1, 2 from the artifact cache, V = 4 compiled, V = 3 neither";
  ASSERT_EQ(second->skipped.size(), 1u);
  EXPECT_EQ(second->skipped[0].config.get_int("V"), 3);
  EXPECT_EQ(second->skipped[0].outcome, "compile_failed");
  EXPECT_NE(second->skipped[0].reason.find("V = 3 is broken"), std::string::npos);
  EXPECT_GT(second->skipped[0].failed_at, 0);
  // (3) A retune measures every config again, the remembered failure too.
  TuneOptions all = exhaustive(0);
  all.cache.retune = true;
  auto third = tuner.tune(broken_kernel(), call.args, **s.device, all);
  ASSERT_TRUE(third.ok()) << third.error().describe();
  ASSERT_NE(find(*third, "V", 3), nullptr) << "a retune skips nothing";
  EXPECT_EQ(find(*third, "V", 3)->outcome, Outcome::kCompileFailed);
  EXPECT_EQ(third->stats.skipped_failed_before, 0u);
  EXPECT_TRUE(third->skipped.empty());
  // (4) A changed kernel source is a new definition: its V = 3 is tried.
  TunableKernel edited = broken_kernel();
  edited.tmpl.source += "\n// edited\n";
  auto fourth = tuner.tune(edited, call.args, **s.device, all);
  ASSERT_TRUE(fourth.ok()) << fourth.error().describe();
  ASSERT_NE(find(*fourth, "V", 3), nullptr);
  EXPECT_EQ(fourth->stats.skipped_failed_before, 0u);
}

// V = 3 crashes its worker: a failure of the moment (memory pressure, a
// signal from outside), retried once kRetryAfterRuns runs have skipped it.
constexpr const char* kCrashSource = R"(
#include "kiln/cpu_kernel.h"
namespace t {
template <int V>
void scale(const kiln::cpu::BlockContext&, const float* x, float* y, int n) {
  if (V == 3) __builtin_trap();
  for (int i = 0; i < n; ++i) y[i] = x[i] * 2.0f;
}
}  // namespace t
)";

TEST(TuningMemory, ACrashIsRetriedAfterABoundedNumberOfRuns) {
  Session s("memory_crash", Isolation::kProcess);
  ASSERT_TRUE(s.device.ok());
  Call call(256);
  const TunableKernel crashing =
      one_block("tuning_memory_crash", kCrashSource, "t::scale<{V}>", "V", {1, 2, 3});
  auto first = s.tuner.tune(crashing, call.args, **s.device, exhaustive(0));
  ASSERT_TRUE(first.ok()) << first.error().describe();
  ASSERT_NE(find(*first, "V", 3), nullptr);
  ASSERT_EQ(find(*first, "V", 3)->outcome, Outcome::kCrashed);
  // Runs that each find no record: the first three skip V = 3, counting
  // themselves; the fourth measures it again.
  for (int run = 1; run <= 4; ++run) {
    remove_records(s);
    TuningCache tunings(s.opts);
    Autotuner tuner(testing::cpu_backend(Isolation::kProcess), &s.artifacts, &tunings);
    auto again = tuner.tune(crashing, call.args, **s.device, exhaustive(0));
    ASSERT_TRUE(again.ok()) << again.error().describe();
    if (run <= 3) {
      ASSERT_EQ(again->skipped.size(), 1u) << "run " << run;
      EXPECT_EQ(again->skipped[0].skipped_runs, run - 1) << "runs that skipped it before";
      EXPECT_EQ(find(*again, "V", 3), nullptr);
    } else {
      EXPECT_TRUE(again->skipped.empty());
      ASSERT_EQ(again->forgotten.size(), 1u);
      EXPECT_NE(again->forgotten[0].why.find("retried after 3 runs"), std::string::npos)
          << again->forgotten[0].why;
      ASSERT_NE(find(*again, "V", 3), nullptr) << "measured again";
      EXPECT_EQ(find(*again, "V", 3)->outcome, Outcome::kCrashed);
    }
  }
}

// LUCKY = 1 is fast (1.6 units) for its first 14 calls in the whole test,
// then slow (3 units); every other config takes 2 units. The call count
// lives in a shared mapping of a file, so it survives worker processes and
// loading the kernel again, and costs nothing to bump. The search measures
// LUCKY in about 10 calls: only a second measurement finds out.
std::string lucky_source(const std::filesystem::path& counter) {
  return R"(
#include "kiln/cpu_kernel.h"
extern "C" int usleep(unsigned int);
extern "C" int open(const char*, int, ...);
extern "C" int ftruncate(int, long);
extern "C" void* mmap(void*, unsigned long, int, int, int, long);
namespace t {
// O_RDWR | O_CREAT, PROT_READ | PROT_WRITE, MAP_SHARED (Linux).
inline int* call_counter() {
  const int fd = open(")" +
         counter.string() + R"(", 02 | 0100, 0600);
  ftruncate(fd, sizeof(int));
  return static_cast<int*>(mmap(nullptr, sizeof(int), 3, 1, fd, 0));
}
template <int LUCKY, int PAD>
void lucky(const kiln::cpu::BlockContext&, const float* x, float* y, int n, int unit_us) {
  int tenths = 20;
  if (LUCKY) {
    static int* calls = call_counter();
    tenths = (*calls)++ < 14 ? 16 : 30;
  }
  usleep(static_cast<unsigned>(tenths * unit_us / 10));
  for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}
}  // namespace t
)";
}

TunableKernel lucky_kernel(const std::filesystem::path& counter) {
  TunableKernel k = one_block("tuning_memory_lucky", lucky_source(counter),
                              "t::lucky<{LUCKY},{PAD}>", "LUCKY", {0, 1});
  k.tmpl.space.param("PAD", {std::int64_t{0}, std::int64_t{1}});
  k.tmpl.space.constraint("three configs, one lucky", [](const Config& c) {
    return c.get_int("LUCKY") == 0 || c.get_int("PAD") == 0;
  });
  k.tmpl.space.default_config(Config{{"LUCKY", std::int64_t{0}}, {"PAD", std::int64_t{0}}});
  return k;
}

// One unit of the lucky kernel's sleep, in microseconds: 1.6 units against
// 2 must hold against a sleeper woken late on a loaded machine (a neighbouring
// test's 0.5 ms units did not, in a CI run under TSan).
constexpr int kLuckyUnitUs = 4000;

// Eight timed repetitions each: the search calls LUCKY 10 times (a checked
// run, a warm-up, 8 timed), under its lucky 14.
TuneOptions fixed_reps(std::size_t finalists) {
  TuneOptions o = quick(8);
  o.measure.min_reps = 8;
  o.search.finalists = finalists;
  o.cache.save = false;
  return o;
}

Result<TuneResult> tune_lucky(Session& s, std::size_t finalists) {
  if (!s.device.ok()) return s.device.error();
  Call call(64, kLuckyUnitUs);
  return s.tuner.tune(lucky_kernel(s.dir / "calls.txt"), call.args, **s.device,
                      fixed_reps(finalists));
}

TEST(TuningMemory, WithoutFinalistsALuckyFirstMeasurementWins) {
  Session s("memory_no_finalists");
  auto r = tune_lucky(s, 0);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->config.get_int("LUCKY"), 1) << "the premise of the next test";
  EXPECT_EQ(r->stats.finalists, 0u);
}

TEST(TuningMemory, FinalistsAreMeasuredAgainInFullAndTheLuckyOneLoses) {
  Session s("memory_finalists");
  auto r = tune_lucky(s, 3);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->stats.finalists, 3u);
  EXPECT_GT(r->stats.finalist_seconds, 0.0);
  EXPECT_EQ(r->config.get_int("LUCKY"), 0) << "chosen from the re-measurement";
  const Measurement* lucky = find(*r, "LUCKY", 1);
  ASSERT_NE(lucky, nullptr);
  ASSERT_TRUE(lucky->ok());
  EXPECT_GT(lucky->stats.median, r->best->stats.median);
  for (const auto& m : r->measurements) EXPECT_EQ(m.stats.reps, 8u) << m.config.to_string();
  ASSERT_TRUE(r->record.has_value());
  EXPECT_DOUBLE_EQ(r->record->best_time_ms, r->best->stats.median * 1e3);
}

// The default W = 8 is first in the space's order and the best W = 1 last:
// without a warm start it is measured last, with one second.
constexpr const char* kNapSource = R"(
#include "kiln/cpu_kernel.h"
extern "C" int usleep(unsigned int);
namespace t {
template <int W>
void nap(const kiln::cpu::BlockContext&, const float* x, float* y, int n, int unit_us) {
  usleep(static_cast<unsigned>(W * unit_us));
  for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}
}  // namespace t
)";

TunableKernel sleep_kernel() {
  return one_block("tuning_memory_warm", kNapSource, "t::nap<{W}>", "W", {8, 4, 2, 1});
}

// One nap unit, in microseconds. A loaded machine wakes a sleeper late: in
// a CI run under TSan, with other tests beside it, W = 1 at 0.5 ms a unit
// twice measured slower than W = 2 or W = 4 (its median 0.5-1.5 ms late).
// At 3 ms a unit, neighbouring W differ by 3 ms or more.
constexpr int kNapUnitUs = 3000;

// One compile thread, one config a unit, one benchmark worker: configs are
// measured in the order the search gives them. Up to seven repetitions, so
// that a late wake-up or two does not move the median.
TuneOptions in_order(std::size_t warm_start) {
  TuneOptions o = quick(7);
  o.search.warm_start = warm_start;
  o.pipeline.compile_threads = 1;
  o.pipeline.group_size = 1;
  return o;
}

TEST(TuningMemory, WarmStartMeasuresTheNeighboursWinnerFirst) {
  Session s("memory_warm");
  ASSERT_TRUE(s.device.ok());
  Call small(64, kNapUnitUs);
  auto neighbour = s.tuner.tune(sleep_kernel(), small.args, **s.device, in_order(0));
  ASSERT_TRUE(neighbour.ok()) << neighbour.error().describe();
  ASSERT_EQ(neighbour->config.get_int("W"), 1);
  ASSERT_TRUE(neighbour->saved) << neighbour->not_saved_reason;
  EXPECT_EQ(neighbour->measurements.back().config.get_int("W"), 1) << "measured last, cold";
  EXPECT_EQ(neighbour->stats.warm_started, 0u);

  Call larger(128, kNapUnitUs);  // another problem of the same kernel
  auto warm = s.tuner.tune(sleep_kernel(), larger.args, **s.device, in_order(3));
  ASSERT_TRUE(warm.ok()) << warm.error().describe();
  ASSERT_EQ(warm->measurements.size(), 4u);
  EXPECT_EQ(warm->measurements[0].config.get_int("W"), 8) << "the default is still first";
  EXPECT_EQ(warm->measurements[1].config.get_int("W"), 1) << "the neighbour's winner next";
  EXPECT_EQ(warm->stats.warm_started, 1u);
  EXPECT_EQ(warm->config.get_int("W"), 1);

  Call other(256, kNapUnitUs);
  auto cold = s.tuner.tune(sleep_kernel(), other.args, **s.device, in_order(0));
  ASSERT_TRUE(cold.ok()) << cold.error().describe();
  EXPECT_EQ(cold->measurements[1].config.get_int("W"), 4) << "warm start off: the space's order";
}

// A shared cache holds another machine's tuning of this very problem: its
// fastest configs are measured right after the default, where this device
// has no record of its own; with the warm start kept to this device they
// are not.
TEST(TuningMemory, WarmStartFromAnotherDevicesWinner) {
  Call call(64, kNapUnitUs);
  TuningRecord theirs;
  {
    Session first("memory_warm_tuned");
    ASSERT_TRUE(first.device.ok());
    auto tuned = first.tuner.tune(sleep_kernel(), call.args, **first.device, in_order(0));
    ASSERT_TRUE(tuned.ok()) << tuned.error().describe();
    ASSERT_EQ(tuned->config.get_int("W"), 1);
    ASSERT_TRUE(tuned->record.has_value());
    theirs = *tuned->record;
  }
  theirs.device.name += " (another machine)";
  for (const WarmStartDevices devices : {WarmStartDevices::kAny, WarmStartDevices::kThis}) {
    Session s(std::string("memory_warm_other_") + warm_start_devices_name(devices));
    ASSERT_TRUE(s.device.ok());
    s.tunings.put(theirs);
    TuneOptions o = in_order(3);
    o.search.warm_start_devices = devices;
    auto r = s.tuner.tune(sleep_kernel(), call.args, **s.device, o);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(r->source, ResultSource::kTuned) << "another device's record is a seed, not served";
    ASSERT_EQ(r->measurements.size(), 4u);
    EXPECT_EQ(r->measurements[0].config.get_int("W"), 8) << "the default is still first";
    if (devices == WarmStartDevices::kAny) {
      // Its ranking, fastest first: 1, 2, 4 (8 is the default).
      EXPECT_EQ(r->measurements[1].config.get_int("W"), 1) << "the other device's winner next";
      EXPECT_EQ(r->measurements[2].config.get_int("W"), 2);
      EXPECT_EQ(r->measurements[3].config.get_int("W"), 4);
      EXPECT_EQ(r->stats.warm_started, 3u);
    } else {
      EXPECT_EQ(r->measurements[1].config.get_int("W"), 4) << "this device only: the space's order";
      EXPECT_EQ(r->stats.warm_started, 0u);
    }
    EXPECT_EQ(r->config.get_int("W"), 1);
  }
}

}  // namespace
}  // namespace kiln
