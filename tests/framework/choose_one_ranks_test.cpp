// choose_one across ranks (TacticTunerOptions::collective): ranks simulated
// as threads of one process, each with its own tuner, runner and cache,
// exchanging bytes through a Collective that meets in memory. The transport
// under a real job is covered by python/tests/test_collective.py (mpirun,
// mpi4py); this checks the decision logic every rank runs.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "framework_test_util.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/framework/tuning_scope.hpp"

namespace kiln {
namespace {

using testing::ScaleCall;

// The ranks' meeting room: an all-gather completes when every rank has
// put its bytes in; each round has a generation so that a fast rank's next
// round never mixes with the one others are still reading.
class Room {
 public:
  explicit Room(int size) : slots_(static_cast<std::size_t>(size)) {}
  std::vector<std::string> all_gather(int rank, const std::string& mine) {
    std::unique_lock lock(mutex_);
    slots_[static_cast<std::size_t>(rank)] = mine;
    const std::uint64_t round = generation_;
    if (++arrived_ == static_cast<int>(slots_.size())) {
      result_ = slots_;
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != round; });
    }
    return result_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> slots_, result_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
};

class RoomCollective final : public Collective {
 public:
  RoomCollective(Room& room, int rank, int size) : room_(room), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Result<std::vector<std::string>> all_gather(const std::string& mine) override {
    return room_.all_gather(rank_, mine);
  }
  Result<std::string> broadcast(const std::string& bytes, int root) override {
    return room_.all_gather(rank_, bytes)[static_cast<std::size_t>(root)];
  }
  Status barrier() override { return ok_status(); }
  [[noreturn]] void abort_job(const std::string& message, int) override {
    throw std::runtime_error(message);
  }
  double seconds_in_collectives() const override { return 0; }

 private:
  Room& room_;
  int rank_, size_;
};

// Each rank's timings favour another tactic: tactic t costs
// (t - rank) mod 8 units of work on rank `rank`, so ranks deciding alone
// pick different tactics. Records which tactics it ran.
class RankRunner : public TunableRunner {
 public:
  explicit RankRunner(int rank) : TunableRunner("rank_runner", "1"), rank_(rank) {}
  std::vector<int> tactics(const ArgList&) override { return {0, 1, 2, 3, 4, 5, 6, 7}; }
  Status run(const ArgList& in, int tactic) override {
    {
      std::lock_guard lock(mutex_);
      ran.insert(tactic);
    }
    const auto* x = static_cast<const float*>(in.at(0).data);
    auto* y = static_cast<float*>(in.at(1).data);
    const std::int64_t n = in.at(0).tensor.numel();
    const int reps = 1 + 6 * ((tactic - rank_ + 64) % 8);
    for (int r = 0; r < reps; ++r) {
      for (std::int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i];
      asm volatile("" ::: "memory");
    }
    return ok_status();
  }
  std::set<int> ran;

 private:
  std::mutex mutex_;
  int rank_;
};

constexpr int kRanks = 4;

struct RankOutcome {
  Choice choice;
  std::set<int> ran;
  std::string error;
};

// Every rank's choose_one of `op` on rows x 256 inputs (`rows_of(rank)`),
// in a tuning scope, with `strategy`; `cache_of(rank)` may give a rank a cache.
std::vector<RankOutcome> run_ranks(DistributedStrategy strategy,
                                   const std::function<std::int64_t(int)>& rows_of,
                                   const std::function<TuningCache*(int)>& cache_of = {}) {
  Room room(kRanks);
  std::vector<RankOutcome> out(kRanks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&, rank] {
      auto opts = testing::quick_options();
      opts.collective = std::make_shared<RoomCollective>(room, rank, kRanks);
      opts.strategy = strategy;
      if (cache_of) opts.cache = cache_of(rank);
      TacticTuner tuner(opts);
      RankRunner runner(rank);
      TunableRunner* runners[] = {&runner};
      ScaleCall call(rows_of(rank), 256);
      TuningScope tuning(true);
      try {
        out[rank].choice = tuner.choose_one("rank_op", runners, call.args);
      } catch (const Error& e) {
        out[rank].error = e.what();
      }
      out[rank].choice.runner = nullptr;  // the runner dies with the thread
      out[rank].ran = runner.ran;
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

class ChooseOneRanks : public ::testing::TestWithParam<DistributedStrategy> {};

TEST_P(ChooseOneRanks, EveryRankGetsTheIdenticalTactic) {
  auto out = run_ranks(GetParam(), [](int) { return 64; });
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_EQ(out[r].error, "") << "rank " << r;
    EXPECT_EQ(out[r].choice.source, ChoiceSource::kTuned) << "rank " << r;
    EXPECT_EQ(out[r].choice.tactic, out[0].choice.tactic) << "rank " << r;
  }
  EXPECT_NE(out[0].choice.tactic, kFallbackTactic);
  // Who measured what: broadcast rank 0 alone, parallel a share each,
  // merge everyone everything.
  for (int r = 0; r < kRanks; ++r) {
    switch (GetParam()) {
      case DistributedStrategy::kBroadcast:
        EXPECT_EQ(out[r].ran.size(), r == 0 ? 8u : 0u) << "rank " << r;
        break;
      case DistributedStrategy::kParallel:
        EXPECT_EQ(out[r].ran.size(), 8u / kRanks) << "rank " << r;
        break;
      default:
        EXPECT_EQ(out[r].ran.size(), 8u) << "rank " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, ChooseOneRanks,
                         ::testing::Values(DistributedStrategy::kBroadcast,
                                           DistributedStrategy::kParallel,
                                           DistributedStrategy::kMerge),
                         [](const ::testing::TestParamInfo<DistributedStrategy>& p) {
                           return std::string(distributed_strategy_name(p.param));
                         });

TEST(ChooseOneRanksCache, OneRanksCachedDecisionServesEveryRankAndNobodyProfiles) {
  auto dir = testing::fresh_dir("ranks_cache");
  // Rank 2 alone decided before, into its own file.
  int cached = kFallbackTactic;
  {
    TuningCache cache = TuningCache::open_file(dir / "rank2.json", false);
    auto opts = testing::quick_options();
    opts.cache = &cache;
    TacticTuner tuner(opts);
    RankRunner runner(2);
    TunableRunner* runners[] = {&runner};
    ScaleCall call(64, 256);
    TuningScope tuning(true);
    cached = tuner.choose_one("rank_op", runners, call.args).tactic;
    ASSERT_NE(cached, kFallbackTactic);
  }
  TuningCache rank2 = TuningCache::open_file(dir / "rank2.json", true);
  auto out = run_ranks(
      DistributedStrategy::kMerge, [](int) { return 64; },
      [&](int rank) { return rank == 2 ? &rank2 : nullptr; });
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_EQ(out[r].error, "") << "rank " << r;
    EXPECT_EQ(out[r].choice.tactic, cached) << "rank " << r;
    EXPECT_EQ(out[r].choice.source, ChoiceSource::kDisk) << "rank " << r;
    EXPECT_TRUE(out[r].ran.empty()) << "rank " << r << " profiled a decision rank 2 had";
  }
}

TEST(ChooseOneRanksMisuse, RanksAskingAboutDifferentShapesAreToldWhichOnEveryRank) {
  auto out =
      run_ranks(DistributedStrategy::kBroadcast, [](int rank) { return rank == 1 ? 32 : 64; });
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_NE(out[r].error.find("rank 1"), std::string::npos) << out[r].error;
    EXPECT_NE(out[r].error.find("same choose_one calls"), std::string::npos) << out[r].error;
    EXPECT_TRUE(out[r].ran.empty()) << "rank " << r << " measured a problem the ranks disagree on";
  }
}

TEST(ChooseOneRanksMisuse, IndependentIsNoCollective) {
  TacticTuner tuner(testing::quick_options());
  Room room(1);
  EXPECT_THROW(tuner.set_collective(std::make_shared<RoomCollective>(room, 0, 1),
                                    DistributedStrategy::kIndependent),
               Error);
}

}  // namespace
}  // namespace kiln
