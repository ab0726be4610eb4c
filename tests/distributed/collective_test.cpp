// The strategies' decision logic over a single-rank Collective (the MPI
// jobs in distributed_test.cpp cover the transport).
#include <gtest/gtest.h>

#include "kiln/distributed/distributed_tune.hpp"

namespace kiln {
namespace {

// A job of one rank: every collective returns this rank's own bytes.
class SoloCollective final : public Collective {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Result<std::vector<std::string>> all_gather(const std::string& mine) override {
    return std::vector<std::string>{mine};
  }
  Result<std::string> broadcast(const std::string& bytes, int) override { return bytes; }
  Status barrier() override { return ok_status(); }
  [[noreturn]] void abort_job(const std::string& message, int) override {
    throw std::runtime_error(message);
  }
  double seconds_in_collectives() const override { return 0; }
};

TEST(DistributedStrategy, NamesParseAndUnknownOnesListTheValidOnes) {
  for (const char* name : {"independent", "broadcast", "parallel", "merge"}) {
    Result<DistributedStrategy> s = parse_distributed_strategy(name);
    ASSERT_TRUE(s.ok());
    EXPECT_STREQ(distributed_strategy_name(*s), name);
  }
  Result<DistributedStrategy> bad = parse_distributed_strategy("all");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("independent, broadcast, parallel or merge"),
            std::string::npos);
}

TEST(DistributedStrategy, ARankThatFailsIsNamedAndNothingIsSaved) {
  SoloCollective solo;
  TuningCache cache = TuningCache::open_file("/nonexistent/never-written.json", true);
  for (auto s : {DistributedStrategy::kBroadcast, DistributedStrategy::kMerge,
                 DistributedStrategy::kParallel}) {
    Result<DistributedOutcome> out = tune_distributed(
        solo, s, TuneOptions{}, cache, [](const TuneOptions&) -> Result<TuneResult> {
          return make_error(ErrorCode::kInvalidArgument, "no such shape");
        });
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.error().message.find("rank 0 failed: no such shape"), std::string::npos)
        << out.error().message;
  }
}

TEST(DistributedStrategy, ParallelAsksTheTunerForItsShardWithSavingOff) {
  SoloCollective solo;
  TuningCache cache = TuningCache::open_file("/nonexistent/never-written.json", true);
  TuneOptions seen;
  (void)tune_distributed(solo, DistributedStrategy::kParallel, TuneOptions{}, cache,
                         [&](const TuneOptions& o) -> Result<TuneResult> {
                           seen = o;
                           return make_error(ErrorCode::kInternal, "stop here");
                         });
  EXPECT_EQ(seen.search.shard_index, 0u);
  EXPECT_EQ(seen.search.shard_count, 1u);
  EXPECT_FALSE(seen.cache.save) << "a rank's partial view must not be saved";
}

}  // namespace
}  // namespace kiln
