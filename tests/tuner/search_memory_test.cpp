// What earlier tunings tell a new one, without compiling anything: the
// distance between problems, neighbours' winners nearest first and other
// devices' fastest configs (the warm start's seeds) and times (their prior), the driver's
// rules for seeds and remembered failures, and the failure table on disk.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "kiln/tuner/warm_start.hpp"
#include "search_memory.hpp"

namespace kiln::internal {
namespace {

ProblemKey gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::string kernel = "gemm") {
  ProblemKey p(std::move(kernel));
  p.tensor("a", TensorArg::contiguous(DType::kF32, {m, k}));
  p.tensor("b", TensorArg::contiguous(DType::kF32, {k, n}));
  return p;
}

ConfigSpace tiles() {
  ConfigSpace s;
  s.param("BM", {std::int64_t{16}, std::int64_t{32}, std::int64_t{64}, std::int64_t{128}});
  s.default_config(Config{{"BM", std::int64_t{16}}});
  return s;
}

Config bm(std::int64_t v) {
  return Config{{"BM", v}};
}

DeviceIdentity host() {
  return DeviceIdentity{"host", "host CPU test (2 threads)", 0, 0};
}

// This kernel's identity on host(): the definition winner() records carry.
TuningIdentity on_host() {
  TuningIdentity id;
  id.device = host();
  return id;
}

TuningRecord winner(ProblemKey problem, Config best, DeviceIdentity device = host()) {
  TuningRecord r;
  r.problem = std::move(problem);
  r.device = std::move(device);
  r.best = std::move(best);
  r.best_time_ms = 1;
  return r;
}

TEST(ProblemDistance, CountsDoublingsAcrossEveryExtent) {
  EXPECT_EQ(problem_distance(gemm(512, 512, 512), gemm(512, 512, 512)), 0);
  // M doubles once in a: 1; K doubles in a and in b: 2 more.
  EXPECT_DOUBLE_EQ(problem_distance(gemm(512, 512, 512), gemm(1024, 512, 1024)), 3);
  EXPECT_DOUBLE_EQ(problem_distance(gemm(1024, 512, 1024), gemm(512, 512, 512)), 3);
  // A halving is as far as a doubling.
  EXPECT_DOUBLE_EQ(problem_distance(gemm(512, 512, 512), gemm(256, 512, 512)),
                   problem_distance(gemm(512, 512, 512), gemm(1024, 512, 512)));
}

TEST(ProblemDistance, AnotherDtypeOrAnExtraArgumentCostsEight) {
  ProblemKey other("gemm");
  other.tensor("a", TensorArg::contiguous(DType::kF16, {512, 512}));
  other.tensor("b", TensorArg::contiguous(DType::kF32, {512, 512}));
  EXPECT_DOUBLE_EQ(problem_distance(gemm(512, 512, 512), other), 8);
  ProblemKey with_scalar = gemm(512, 512, 512);
  with_scalar.scalar("split", std::int64_t{4});
  EXPECT_DOUBLE_EQ(problem_distance(gemm(512, 512, 512), with_scalar), 8);
  EXPECT_DOUBLE_EQ(problem_distance(with_scalar, gemm(512, 512, 512)), 8);
}

TEST(NeighbourWinners, NearestFirstOfThisKernelItsDefinitionAndDeviceOnly) {
  const ConfigSpace space = tiles();
  std::vector<TuningRecord> records = {
      winner(gemm(4096, 4096, 4096), bm(128)),                      // far
      winner(gemm(1024, 1024, 1024), bm(64)),                       // 3 doublings
      winner(gemm(512, 512, 1024), bm(32)),                         // 2 (K in a and b)
      winner(gemm(600, 600, 600, "softmax"), bm(16)),               // another kernel
      winner(gemm(512, 512, 512), bm(128), {"host", "other CPU"}),  // another device
      winner(gemm(512, 512, 512), bm(16)),                          // another definition
  };
  records.back().definition = hash128("an edited kernel");
  const auto seeds = neighbour_winners(records, gemm(512, 512, 512), on_host(), space, 3);
  ASSERT_EQ(seeds.size(), 3u);
  EXPECT_EQ(seeds[0], bm(32));
  EXPECT_EQ(seeds[1], bm(64));
  EXPECT_EQ(seeds[2], bm(128));
  EXPECT_EQ(neighbour_winners(records, gemm(512, 512, 512), on_host(), space, 1).size(), 1u);
  EXPECT_TRUE(neighbour_winners(records, gemm(512, 512, 512), on_host(), space, 0).empty());
}

TEST(NeighbourWinners, EachConfigOnceAndOnlyConfigsTheSpaceHolds) {
  const ConfigSpace space = tiles();
  std::vector<TuningRecord> records = {
      winner(gemm(256, 256, 256), bm(64)),
      winner(gemm(1024, 1024, 1024), bm(64)),   // the same winner again
      winner(gemm(2048, 2048, 2048), bm(256)),  // not in the space any more
      winner(gemm(4096, 4096, 4096), bm(32)),
  };
  const auto seeds = neighbour_winners(records, gemm(512, 512, 512), on_host(), space, 5);
  ASSERT_EQ(seeds.size(), 2u);
  EXPECT_EQ(seeds[0], bm(64));
  EXPECT_EQ(seeds[1], bm(32));
}

// Square problems, for the warm start's tests.
ProblemKey square(std::int64_t m, std::string kernel = "gemm") {
  return gemm(m, m, m, std::move(kernel));
}

Hash128 definition() {
  return hash128("the gemm kernel's source and space");
}

TuningIdentity here() {
  TuningIdentity id;
  id.definition = definition();
  id.device = DeviceIdentity{"sm_90", "GPU here", 9, 0};
  return id;
}

// A record of `device` whose measurements are `times` (config BM -> ms; a
// negative time failed); its winner is the fastest.
TuningRecord tuned_on(const std::string& device, std::map<std::int64_t, double> times,
                      ProblemKey problem = square(512), Hash128 def = definition()) {
  TuningRecord r;
  r.problem = std::move(problem);
  r.definition = def;
  r.device = DeviceIdentity{"sm_80", device, 8, 0};
  for (const auto& [v, t] : times) {
    r.measured.emplace_back(bm(v), t < 0 ? 0 : t, t >= 0, t < 0 ? "did not compile" : "");
    if (t >= 0 && (r.best.values().empty() || t < r.best_time_ms)) {
      r.best = bm(v);
      r.best_time_ms = t;
    }
  }
  return r;
}

TEST(OtherDeviceWinners, ConfigsFastOnSeveralDevicesComeFirst) {
  // A ranks 16, 32, 64 (128 failed: unranked); B ranks 64, 32, 16, 128.
  // Mean ranks: 16 (0 + 2) / 2 = 1, 32 (1 + 1) / 2 = 1, 64 (2 + 0) / 2 = 1,
  // 128 (3 + 3) / 2 = 3: A's unranked 128 counts as A's length, 3. The ties
  // go by the config's text: BM=16 before BM=32 before BM=64.
  const std::vector<TuningRecord> records = {
      tuned_on("A", {{16, 1.0}, {32, 2.0}, {64, 3.0}, {128, -1}}),
      tuned_on("B", {{64, 1.0}, {32, 1.5}, {16, 2.0}, {128, 4.0}})};
  EXPECT_EQ(other_device_winners(records, square(512), here(), tiles(), 4),
            (std::vector<Config>{bm(16), bm(32), bm(64), bm(128)}));
  // C agrees with B: 64 is now fastest on two of three.
  std::vector<TuningRecord> three = records;
  three.push_back(tuned_on("C", {{64, 1.0}, {32, 2.0}}));
  EXPECT_EQ(other_device_winners(three, square(512), here(), tiles(), 2),
            (std::vector<Config>{bm(64), bm(32)}));
  EXPECT_TRUE(other_device_winners(records, square(512), here(), tiles(), 0).empty());
}

TEST(OtherDeviceWinners, OnlyOtherDevicesOfThisKernelsDefinitionEachAtItsNearestProblem) {
  TuningRecord mine = tuned_on("GPU here", {{128, 1.0}});
  mine.device = here().device;
  const std::vector<TuningRecord> records = {
      mine,                                                                 // this device
      tuned_on("A", {{32, 1.0}}, square(512, "softmax")),                   // another kernel
      tuned_on("A", {{16, 1.0}}, square(512), hash128("an older source")),  // another definition
      tuned_on("A", {{64, 1.0}}, square(4096)),                             // A, far
      tuned_on("A", {{32, 1.0}, {64, 2.0}}, square(1024)),                  // A, nearest
  };
  // A's nearest record alone ranks: 32, then 64.
  EXPECT_EQ(other_device_winners(records, square(512), here(), tiles(), 3),
            (std::vector<Config>{bm(32), bm(64)}));
}

TEST(OtherDeviceWinners, ConfigsTheSpaceNoLongerHoldsAreLeftOut) {
  const std::vector<TuningRecord> records = {tuned_on("A", {{256, 1.0}, {64, 2.0}})};
  EXPECT_EQ(other_device_winners(records, square(512), here(), tiles(), 3),
            std::vector<Config>{bm(64)});
}

TEST(OtherDevicePrior, LogTimesAboveEachDevicesFastestClippedAtItsMedianAveraged) {
  // A: 16 at 1 ms, 32 at 2, 64 at 4, 128 failed; in log units above its
  // fastest 0, ln 2, ln 4, and its median ln 2 clips 64 to ln 2 and puts
  // the failure 0.5 above it. B: 64 and 32 at 1 ms (median 0); 16 and 128,
  // which B did not measure, count B's median.
  TuningRecord mine = tuned_on("GPU here", {{16, 9.0}, {128, 1.0}});
  mine.device = here().device;  // this device's own record is no prior
  const std::vector<TuningRecord> records = {
      mine, tuned_on("A", {{16, 1.0}, {32, 2.0}, {64, 4.0}, {128, -1}}),
      tuned_on("B", {{64, 1.0}, {32, 1.0}})};
  const auto prior = other_device_prior(records, square(512), here(), tiles());
  ASSERT_NE(prior, nullptr);
  EXPECT_EQ(prior->devices, 2u);
  const double ln2 = std::log(2.0);
  EXPECT_NEAR(prior->at(bm(16)), 0.0, 1e-12);
  EXPECT_NEAR(prior->at(bm(32)), ln2 / 2, 1e-12);
  EXPECT_NEAR(prior->at(bm(64)), ln2 / 2, 1e-12);
  EXPECT_NEAR(prior->at(bm(128)), (ln2 + 0.5) / 2, 1e-12);
  EXPECT_NEAR(prior->unknown, ln2 / 2, 1e-12) << "each device's median";
}

TEST(OtherDevicePrior, NoneWithoutAnotherDevicesTimes) {
  TuningRecord mine = tuned_on("GPU here", {{16, 1.0}, {32, 2.0}});
  mine.device = here().device;
  EXPECT_EQ(other_device_prior({mine}, square(512), here(), tiles()), nullptr);
  const std::vector<TuningRecord> one_ran = {mine, tuned_on("A", {{16, 1.0}, {32, -1}})};
  EXPECT_EQ(other_device_prior(one_ran, square(512), here(), tiles()), nullptr)
      << "one config that ran ranks nothing";
  const std::vector<TuningRecord> two_ran = {mine, tuned_on("A", {{16, 1.0}, {32, 2.0}})};
  EXPECT_NE(other_device_prior(two_ran, square(512), here(), tiles()), nullptr);
}

TEST(WarmStartSeeds, ThisDevicesNeighboursFirstThenOtherDevicesForTheRest) {
  TuningRecord mine = tuned_on("GPU here", {{128, 1.0}}, square(1024));
  mine.device = here().device;
  const std::vector<TuningRecord> records = {mine,
                                             tuned_on("A", {{128, 1.0}, {32, 2.0}, {64, 3.0}})};
  // 128 from this device; A's 128 again is not measured twice: 32 next.
  EXPECT_EQ(warm_start_seeds(records, square(512), here(), tiles(), 2, WarmStartDevices::kAny),
            (std::vector<Config>{bm(128), bm(32)}));
  EXPECT_EQ(warm_start_seeds(records, square(512), here(), tiles(), 2, WarmStartDevices::kThis),
            std::vector<Config>{bm(128)});
  EXPECT_EQ(warm_start_seeds(records, square(512), here(), tiles(), 1, WarmStartDevices::kAny),
            std::vector<Config>{bm(128)})
      << "this device's own fill the count first";
  EXPECT_EQ(parse_warm_start_devices("any"), WarmStartDevices::kAny);
  EXPECT_EQ(parse_warm_start_devices("this"), WarmStartDevices::kThis);
  EXPECT_FALSE(parse_warm_start_devices("all").has_value());
}

// Records every report, as the driver's strategy would hear them.
class Listener : public SearchStrategy {
 public:
  const char* name() const override { return "listener"; }
  std::vector<Config> next(std::size_t) override { return {}; }
  void report(const Config& c, std::optional<double> s) override { heard.emplace_back(c, s); }
  std::vector<std::pair<Config, std::optional<double>>> heard;
};

TunableKernel kernel_without(std::int64_t pruned) {
  TunableKernel k;
  k.tmpl.name = "gemm";
  k.tmpl.space = tiles();
  k.early_prune = [pruned](const Config& c, const ProblemKey&) {
    return c.get_int("BM") != pruned;
  };
  return k;
}

TEST(MemoryRules, SeedsLeaveOutTheDefaultFailuresAndPrunedConfigs) {
  SearchMemory memory;
  memory.seeds = {bm(16), bm(128), bm(32), bm(64), bm(32)};
  memory.failed_before = {{bm(32).key(), {bm(32), "crashed", ""}}};
  MemoryRules rules(memory, kernel_without(128), gemm(8, 8, 8), bm(16));
  EXPECT_EQ(rules.take_seeds(), std::vector<Config>{bm(64)});
  EXPECT_TRUE(rules.take_seeds().empty()) << "seeds go into the first round only";
}

TEST(MemoryRules, AFailureFromBeforeIsDroppedAndReportedAsFailed) {
  SearchMemory memory;
  memory.failed_before = {{bm(32).key(), {bm(32), "crashed", "SIGSEGV"}},
                          {bm(16).key(), {bm(16), "timeout", ""}}};
  MemoryRules rules(memory, kernel_without(0), gemm(8, 8, 8), bm(16));
  Listener strategy;
  EXPECT_TRUE(rules.drop(bm(32), strategy));
  EXPECT_TRUE(rules.drop(bm(32), strategy)) << "proposed twice, listed once";
  EXPECT_FALSE(rules.drop(bm(64), strategy));
  EXPECT_FALSE(rules.drop(bm(16), strategy)) << "the default is measured whatever happened before";
  ASSERT_EQ(strategy.heard.size(), 2u);
  EXPECT_EQ(strategy.heard[0].first, bm(32));
  EXPECT_FALSE(strategy.heard[0].second.has_value());
  EXPECT_EQ(rules.skipped(), 2u);
  ASSERT_EQ(rules.skipped_configs().size(), 1u) << "the report lists each config once";
  EXPECT_EQ(rules.skipped_configs()[0].reason, "SIGSEGV") << "with what was remembered";
}

TEST(MemoryRules, ASeedProposedLaterIsNotMeasuredTwiceAndItsTimeIsReported) {
  SearchMemory memory;
  memory.seeds = {bm(64)};
  MemoryRules rules(memory, kernel_without(0), gemm(8, 8, 8), bm(16));
  Listener strategy;
  EXPECT_FALSE(rules.drop(bm(64), strategy)) << "not a seed in a round yet";
  ASSERT_EQ(rules.take_seeds().size(), 1u);
  EXPECT_TRUE(rules.drop(bm(64), strategy));
  EXPECT_TRUE(strategy.heard.empty()) << "its own round's feed back reports it";
  rules.measured(bm(64), 0.25);
  EXPECT_EQ(rules.seeds_measured(), 1u);
  EXPECT_TRUE(rules.drop(bm(64), strategy));
  ASSERT_EQ(strategy.heard.size(), 1u);
  EXPECT_EQ(strategy.heard[0].second, 0.25);
  EXPECT_EQ(rules.skipped(), 0u) << "a seed is not a failure";
}

TEST(FailuresToRemember, OnlyTheConfigsOwnFailures) {
  std::vector<Measurement> ms(4);
  ms[0].config = bm(16);  // ok
  ms[1].config = bm(32);
  ms[1].outcome = Outcome::kCompileFailed;
  ms[1].error.message = "static assertion failed: BM too large";
  ms[2].config = bm(64);
  ms[2].outcome = Outcome::kCancelled;  // the budget, not the config
  ms[3].config = bm(128);
  ms[3].outcome = Outcome::kWrongResult;
  const auto kept = failures_to_remember(ms);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].config, bm(32));
  EXPECT_EQ(kept[0].outcome, "compile_failed");
  EXPECT_NE(kept[0].reason.find("BM too large"), std::string::npos);
  EXPECT_EQ(kept[1].outcome, "wrong_result");
}

class FailureTable : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kiln_failed_configs_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  FailureKey key(int threads = 2) const {
    return FailureKey{gemm(512, 512, 512), TuningIdentity{hash128("def"), host(), {}, {}}, threads};
  }
  std::filesystem::path dir_;
};

TEST_F(FailureTable, RemembersPerProblemDefinitionAndThreads) {
  FailedConfigs table(dir_);
  ASSERT_TRUE(table.recall(key()).empty());
  ASSERT_TRUE(table.remember(key(), {{bm(32), "crashed", "SIGSEGV"}}).ok());
  ASSERT_TRUE(table.remember(key(), {{bm(64), "timeout", "hung"}}).ok());
  const auto both = table.recall(key());
  ASSERT_EQ(both.size(), 2u) << "a second tuning adds to the first";
  EXPECT_EQ(both[0].config, bm(32));
  EXPECT_EQ(both[0].outcome, "crashed");
  EXPECT_TRUE(table.recall(key(16)).empty()) << "another thread count";
  FailureKey changed = key();
  changed.identity.definition = hash128("edited source");
  EXPECT_TRUE(table.recall(changed).empty()) << "a changed kernel forgets";
  FailureKey other = key();
  other.problem = gemm(1024, 1024, 1024);
  EXPECT_TRUE(table.recall(other).empty());
}

TEST_F(FailureTable, ReadOnlyWritesNothingAndADamagedFileIsIgnored) {
  ASSERT_TRUE(FailedConfigs(dir_, true).remember(key(), {{bm(32), "crashed", ""}}).ok());
  EXPECT_FALSE(std::filesystem::exists(dir_));
  FailedConfigs table(dir_);
  ASSERT_TRUE(table.remember(key(), {{bm(32), "crashed", ""}}).ok());
  // Truncated, and whole JSON whose header fields have another type (which
  // nlohmann's value() would throw for, out of the reader).
  for (const char* damaged :
       {R"({"format": 1)", R"({"format": 1, "format_version": 1, "failed": []})",
        R"({"format": "kiln-failed-configs", "format_version": "1", "failed": []})"}) {
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      if (e.path().extension() == ".json") std::ofstream(e.path()) << damaged;
    }
    EXPECT_TRUE(table.recall(key()).empty()) << damaged;
  }
  EXPECT_TRUE(FailedConfigs().recall(key()).empty());
}

TEST_F(FailureTable, LivesBesideTheTuningCacheAndGoesWithItsClear) {
  Options o = Options::global();
  o.cache_dir = dir_;
  TuningCache cache(o);
  FailedConfigs table = FailedConfigs::beside(cache);
  ASSERT_TRUE(table.enabled());
  ASSERT_TRUE(table.remember(key(), {{bm(32), "crashed", ""}}).ok());
  EXPECT_EQ(table.recall(key()).size(), 1u);
  ASSERT_TRUE(cache.clear().ok());
  EXPECT_TRUE(table.recall(key()).empty()) << "a cleared cache tries every config again";
  o.cache_read_only = true;
  TuningCache read_only(o);
  ASSERT_TRUE(FailedConfigs::beside(read_only).remember(key(), {{bm(32), "crashed", ""}}).ok());
  EXPECT_TRUE(table.recall(key()).empty()) << "a read-only cache writes nothing";
  EXPECT_FALSE(FailedConfigs::beside(TuningCache::open_file(dir_ / "t.json", true)).enabled());
}

}  // namespace
}  // namespace kiln::internal
