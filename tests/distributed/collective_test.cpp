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

// A job of two ranks seen from rank 0: each all_gather returns this rank's
// bytes and then the next of rank 1's scripted ones.
class TwoRankCollective final : public Collective {
 public:
  explicit TwoRankCollective(std::vector<std::string> other) : other_(std::move(other)) {}
  int rank() const override { return 0; }
  int size() const override { return 2; }
  Result<std::vector<std::string>> all_gather(const std::string& mine) override {
    if (next_ >= other_.size()) return make_error(ErrorCode::kInternal, "rank 1 said nothing");
    return std::vector<std::string>{mine, other_[next_++]};
  }
  Result<std::string> broadcast(const std::string& bytes, int) override { return bytes; }
  Status barrier() override { return ok_status(); }
  [[noreturn]] void abort_job(const std::string& message, int) override {
    throw std::runtime_error(message);
  }
  double seconds_in_collectives() const override { return 0; }

 private:
  std::vector<std::string> other_;
  std::size_t next_ = 0;
};

TuningRecord two_rank_record(const std::string& kernel, const std::string& definition_text) {
  TuningRecord record;
  record.problem = ProblemKey(kernel);
  record.definition = hash128(definition_text);
  record.best = Config{};
  record.best_time_ms = 1;
  return record;
}

nlohmann::json two_rank_report(const TuningRecord& record) {
  return {{"ok", true},
          {"now", "2026-11-29T10:00:00Z"},
          {"served", false},
          {"record", record.to_json()},
          {"measured",
           {{{"config", Config{}.to_json()}, {"ok", true}, {"median_ms", 1.0}, {"reason", ""}}}}};
}

TEST(DistributedStrategy, RanksNamingDifferentProblemsStopBeforeAnyTuning) {
  TwoRankCollective pair({"kernel k shape n=128"});
  TuningCache cache = TuningCache::open_file("/nonexistent/never-written.json", true);
  int tunings = 0;
  Result<DistributedOutcome> out = tune_distributed(
      pair, DistributedStrategy::kBroadcast, TuneOptions{}, cache,
      [&](const TuneOptions&) -> Result<TuneResult> {
        ++tunings;
        return make_error(ErrorCode::kInternal, "not reached");
      },
      "kernel k shape n=64");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("rank 1 tunes kernel k shape n=128, rank 0 tunes kernel k "
                                     "shape n=64"),
            std::string::npos)
      << out.error().message;
  EXPECT_EQ(tunings, 0);
}

// Without problem texts (an API caller that passes none), records of
// another kernel definition are still refused, never merged.
TEST(DistributedStrategy, ReportsOfAnotherKernelDefinitionAreNotMerged) {
  for (const char* other_definition : {"v1", "v2"}) {
    const TuningRecord theirs = two_rank_record("k", other_definition);
    TwoRankCollective pair({"", two_rank_report(theirs).dump()});
    TuningCache cache = TuningCache::open_file("/nonexistent/never-written.json", true);
    Result<DistributedOutcome> out =
        tune_distributed(pair, DistributedStrategy::kMerge, TuneOptions{}, cache,
                         [](const TuneOptions&) -> Result<TuneResult> {
                           TuneResult result;
                           result.source = ResultSource::kTuned;
                           result.record = two_rank_record("k", "v1");
                           return result;
                         });
    if (std::string(other_definition) == "v1") {
      EXPECT_TRUE(out.ok()) << out.error().message;
      continue;
    }
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.error().message.find("rank 1 tuned another problem than rank 0"),
              std::string::npos)
        << out.error().message;
  }
}

TEST(DistributedStrategy, AMalformedReportIsNamedNotThrown) {
  for (const char* bytes : {"kernel k", "[1,2]", R"({"ok":true,"measured":3})"}) {
    TwoRankCollective pair({"", bytes});
    TuningCache cache = TuningCache::open_file("/nonexistent/never-written.json", true);
    Result<DistributedOutcome> out =
        tune_distributed(pair, DistributedStrategy::kMerge, TuneOptions{}, cache,
                         [](const TuneOptions&) -> Result<TuneResult> { return TuneResult{}; });
    ASSERT_FALSE(out.ok()) << bytes;
    EXPECT_NE(out.error().message.find("rank 1's report is malformed"), std::string::npos)
        << out.error().message;
  }
}

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

TEST(DistributedStrategy, AnotherRanksCachedRecordServesThisRankWithoutTuning) {
  // Rank 1 says its problem, then that its cache holds a record; rank 0
  // (here) holds none and must not tune.
  TuningRecord theirs = two_rank_record("k", "definition");
  theirs.best = Config{{"BLOCK", std::int64_t{128}}};
  TwoRankCollective two({"problem", theirs.to_json().dump()});
  TuningCache cache = TuningCache::open_file("/nonexistent/never-written.json", true);
  int tuned = 0;
  Result<DistributedOutcome> out = tune_distributed(
      two, DistributedStrategy::kMerge, TuneOptions{}, cache,
      [&](const TuneOptions&) -> Result<TuneResult> {
        ++tuned;
        return make_error(ErrorCode::kInternal, "must not tune");
      },
      "problem", [] { return std::optional<TuningRecord>(); });
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(tuned, 0);
  EXPECT_TRUE(out->served);
  EXPECT_EQ(out->record.best, theirs.best);
  EXPECT_EQ(out->benchmarked, 0u);
}

}  // namespace
}  // namespace kiln
