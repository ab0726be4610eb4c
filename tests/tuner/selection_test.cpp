#include "kiln/tuner/selection.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>

#include "kiln/core/error.hpp"

namespace kiln {
namespace {

Measurement ok(std::int64_t bm, std::vector<double> samples) {
  Measurement m;
  m.config = Config{{"BM", bm}};
  m.stats = TimingStats::from_samples(std::move(samples));
  return m;
}

Measurement failed(std::int64_t bm, Outcome outcome, std::string reason) {
  Measurement m;
  m.config = Config{{"BM", bm}};
  m.outcome = outcome;
  m.error = make_error(outcome_error_code(outcome), std::move(reason));
  return m;
}

TEST(TimingStats, OrderStatistics) {
  auto t = TimingStats::from_samples({5, 1, 4, 2, 3});
  EXPECT_EQ(t.reps, 5u);
  EXPECT_DOUBLE_EQ(t.min, 1);
  EXPECT_DOUBLE_EQ(t.max, 5);
  EXPECT_DOUBLE_EQ(t.median, 3);
  EXPECT_DOUBLE_EQ(t.mean, 3);
  EXPECT_DOUBLE_EQ(t.p20, 1.8);
  EXPECT_DOUBLE_EQ(t.p80, 4.2);
  EXPECT_DOUBLE_EQ(t.spread, (4.2 - 1.8) / 3);
}

TEST(TimingStats, ACountThatIsNotAWholeNumberIsRejected) {
  nlohmann::json j = TimingStats::from_samples({1, 2, 3}).to_json();
  EXPECT_EQ(TimingStats::from_json(j).reps, 3u);
  const std::vector<nlohmann::json> damages = {nlohmann::json(2.5), nlohmann::json(-1),
                                               nlohmann::json(1e30)};
  for (const nlohmann::json& bad : damages) {
    j["reps"] = bad;
    try {
      (void)TimingStats::from_json(j);
      ADD_FAILURE() << bad.dump();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("expected a whole number"), std::string::npos);
    }
  }
}

TEST(TimingStats, BrokenTimersAreRejected) {
  EXPECT_THROW(TimingStats::from_samples({}), Error);
  EXPECT_THROW(TimingStats::from_samples({1.0, -1.0}), Error);
  EXPECT_THROW(TimingStats::from_samples({1.0, std::nan("")}), Error);
}

TEST(Measurement, JsonRoundTripKeepsReasonOrStats) {
  Measurement a = ok(64, {1e-3, 2e-3});
  Measurement b = failed(128, Outcome::kCompileFailed, "error: identifier \"x\" is undefined");
  for (const Measurement& m : {a, b}) {
    Measurement back = Measurement::from_json(nlohmann::json::parse(m.to_json().dump()));
    EXPECT_EQ(back.config, m.config);
    EXPECT_EQ(back.outcome, m.outcome);
    EXPECT_EQ(back.reason(), m.reason());
    EXPECT_DOUBLE_EQ(back.stats.median, m.stats.median);
  }
}

// A failure travels whole (a worker process sends it as JSON): its code,
// message and details (a compiler log of any length) come back as they
// were, never cut short.
TEST(Measurement, JsonRoundTripKeepsTheWholeError) {
  Measurement m = failed(128, Outcome::kCompileFailed, "the compiler rejected the program");
  m.error.details["log"] = std::string(5000, 'x') + "\nerror: the last line";
  m.error.details["options"] = "-O3 -std=c++20";
  Measurement back = Measurement::from_json(nlohmann::json::parse(m.to_json().dump()));
  EXPECT_EQ(back.error.code, ErrorCode::kCompileFailed);
  EXPECT_EQ(back.error.message, m.error.message);
  EXPECT_EQ(back.error.details, m.error.details);
  EXPECT_NE(back.reason().find("error: the last line"), std::string::npos);
  // A reply from an older worker carries the reason alone.
  Measurement old = Measurement::from_json(nlohmann::json::parse(
      R"({"config":{"BM":1},"outcome":"timeout","reason":"passed its deadline"})"));
  EXPECT_EQ(old.error.code, ErrorCode::kTimeout);
  EXPECT_EQ(old.reason(), "passed its deadline");
  EXPECT_THROW(Measurement::from_json(nlohmann::json::parse(R"({"config":{},"outcome":"meh"})")),
               Error);
}

TEST(Selection, FastestWinsWhenClearlyFaster) {
  std::vector<Measurement> ms = {ok(64, {2.0, 2.0}), ok(128, {1.0, 1.0}), ok(256, {3.0, 3.0})};
  auto s = select_winner(ms);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->winner, 1u);
  EXPECT_EQ(s->tied, std::vector<std::size_t>{1});
}

TEST(Selection, FailuresAreNeverChosen) {
  std::vector<Measurement> ms = {failed(32, Outcome::kWrongResult, "max abs error 3.5"),
                                 ok(64, {2.0}), failed(16, Outcome::kTimeout, "deadline 1s")};
  auto s = select_winner(ms);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->winner, 1u);
  EXPECT_FALSE(select_winner({ms[0], ms[2]}).has_value());
}

TEST(Selection, TiesWithinNoiseGoToTheSameConfigWhateverTheOrder) {
  // Three configs within 1% of each other: noise decides their order, so the
  // pick must not depend on it.
  std::vector<Measurement> ms = {ok(64, {1.005}), ok(128, {1.0}), ok(32, {1.009}), ok(256, {1.5})};
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::shuffle(ms.begin(), ms.end(), rng);
    auto s = select_winner(ms);
    ASSERT_TRUE(s);
    EXPECT_EQ(ms[s->winner].config.get_int("BM"), 128) << "smallest canonical text among the tied";
    EXPECT_EQ(s->tied.size(), 3u);
  }
}

TEST(Selection, PreferredDefaultWinsATie) {
  std::vector<Measurement> ms = {ok(64, {1.0}), ok(128, {1.01})};
  SelectionPolicy policy;
  policy.prefer = Config{{"BM", std::int64_t{128}}};
  auto s = select_winner(ms, policy);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->winner, 1u);
  // ...but not when it is clearly slower.
  ms[1] = ok(128, {1.5});
  EXPECT_EQ(select_winner(ms, policy)->winner, 0u);
}

TEST(Selection, BandFollowsTheMeasuredNoiseWithinLimits) {
  // The best is noisy (spread 0.06): a config 5% slower is tied.
  std::vector<Measurement> ms = {ok(64, {0.95, 1.0, 1.05}), ok(128, {1.05, 1.05, 1.05})};
  auto s = select_winner(ms);
  ASSERT_TRUE(s);
  EXPECT_GT(s->band, 0.02);
  EXPECT_EQ(s->tied.size(), 2u);
  // Wild noise is capped: a config 20% slower is never tied.
  ms = {ok(64, {0.1, 1.0, 5.0}), ok(128, {1.2})};
  s = select_winner(ms);
  EXPECT_DOUBLE_EQ(s->band, 0.10);
  EXPECT_EQ(s->tied.size(), 1u);
}

}  // namespace
}  // namespace kiln
