// The output judge (lib/tuner/output_judge.hpp): the default config's
// outputs are the reference whenever they arrive; when the default gives
// none, the largest group of agreeing configs is; when no group stands
// out, nothing is claimed.
#include "output_judge.hpp"

#include <gtest/gtest.h>

namespace kiln::internal {
namespace {

Config cfg(int b) {
  return Config{{"B", std::int64_t{b}}};
}

Measurement ok(int b) {
  Measurement m;
  m.config = cfg(b);
  m.stats.median = 1e-3 * b;
  return m;
}

Measurement failed(int b, Outcome outcome) {
  Measurement m = ok(b);
  m.outcome = outcome;
  m.error = make_error(outcome_error_code(outcome), "it broke");
  return m;
}

Outputs values(double v) {
  return Outputs{{"y", std::vector<double>(16, v)}};
}

OutputJudge judge(std::optional<std::string> unavailable = std::nullopt) {
  return OutputJudge(cfg(1), {{"y", Tolerance{}}}, std::move(unavailable));
}

void observe(OutputJudge& j, const Measurement& m, double v) {
  Outputs o = values(v);
  j.observe(m, &o);
}

TEST(OutputJudge, TheDefaultIsTheReferenceEvenWhenItLandsLast) {
  OutputJudge j(cfg(1), {{"y", Tolerance{}}});
  observe(j, ok(2), 1.0);
  observe(j, ok(3), 5.0);  // wrong
  EXPECT_TRUE(j.wrong().empty()) << "nothing is known before the default lands";
  observe(j, ok(1), 1.0);
  observe(j, ok(4), 5.0);  // wrong, judged at once
  auto wrong = j.wrong();
  EXPECT_EQ(wrong.size(), 2u);
  EXPECT_TRUE(wrong.count(cfg(3).to_string()));
  EXPECT_TRUE(wrong.count(cfg(4).to_string()));
  EXPECT_NE(wrong[cfg(3).to_string()].find("output 'y'"), std::string::npos);
  ReferenceReport r = j.finish();
  EXPECT_EQ(r.kind, ReferenceReport::Kind::kDefault);
  EXPECT_EQ(r.name(), "default");
  EXPECT_TRUE(r.checked());
}

TEST(OutputJudge, AFailedDefaultHandsOverToTheConsensus) {
  OutputJudge j(cfg(1), {{"y", Tolerance{}}});
  observe(j, ok(2), 1.0);
  j.observe(failed(1, Outcome::kCrashed), nullptr);
  observe(j, ok(3), 1.0);
  observe(j, ok(4), 1.0 + 1e-9);  // within tolerance: agrees
  observe(j, ok(5), -3.0);
  j.observe(failed(6, Outcome::kTimeout), nullptr);  // a failure is no vote
  ReferenceReport r = j.finish();
  EXPECT_EQ(r.kind, ReferenceReport::Kind::kConsensus);
  EXPECT_EQ(r.name(), "consensus of 3 configs");
  EXPECT_NE(r.detail.find("crashed"), std::string::npos) << r.detail;
  auto wrong = j.wrong();
  ASSERT_EQ(wrong.size(), 1u);
  EXPECT_NE(wrong[cfg(5).to_string()].find("consensus of 3"), std::string::npos);
}

TEST(OutputJudge, APrunedDefaultMeansConsensusFromTheStart) {
  OutputJudge j = judge("the default config is pruned");
  observe(j, ok(2), 2.0);
  observe(j, ok(3), 2.0);
  observe(j, ok(4), 7.0);
  ReferenceReport r = j.finish();
  EXPECT_EQ(r.kind, ReferenceReport::Kind::kConsensus);
  EXPECT_EQ(r.agreeing, 2u);
  EXPECT_EQ(r.detail, "the default config is pruned");
  EXPECT_EQ(j.wrong().size(), 1u);
}

TEST(OutputJudge, ATieOrALoneConfigClaimsNothing) {
  {
    OutputJudge j = judge("pruned");
    observe(j, ok(2), 2.0);
    observe(j, ok(3), 2.0);
    observe(j, ok(4), 7.0);
    observe(j, ok(5), 7.0);
    ReferenceReport r = j.finish();
    EXPECT_EQ(r.kind, ReferenceReport::Kind::kNone);
    EXPECT_EQ(r.name(), "none");
    EXPECT_FALSE(r.checked());
    EXPECT_NE(r.detail.find("groups of 2, 2"), std::string::npos) << r.detail;
    EXPECT_TRUE(j.wrong().empty()) << "no one is called wrong without a reference";
  }
  {
    OutputJudge j = judge("pruned");
    observe(j, ok(2), 2.0);
    ReferenceReport r = j.finish();
    EXPECT_EQ(r.kind, ReferenceReport::Kind::kNone);
    EXPECT_NE(r.detail.find("only one config"), std::string::npos) << r.detail;
  }
  {
    OutputJudge j = judge();
    j.observe(failed(1, Outcome::kCompileFailed), nullptr);
    ReferenceReport r = j.finish();
    EXPECT_EQ(r.kind, ReferenceReport::Kind::kNone);
    EXPECT_NE(r.detail.find("compile_failed"), std::string::npos) << r.detail;
  }
}

TEST(OutputJudge, VerdictsMoveConfigsFromBenchmarkedToFailed) {
  std::vector<Measurement> ms = {ok(1), ok(2), failed(3, Outcome::kCrashed)};
  KernelStats stats;
  stats.benchmarked = 2;
  stats.failed = 1;
  apply_verdicts({{cfg(2).to_string(), "output 'y': differs"}}, ms, stats);
  EXPECT_EQ(ms[1].outcome, Outcome::kWrongResult);
  EXPECT_EQ(ms[1].reason(), "output 'y': differs");
  EXPECT_EQ(stats.benchmarked, 1u);
  EXPECT_EQ(stats.failed, 2u);
  EXPECT_EQ(stats.failed_by_reason["wrong_result"], 1u);
  apply_verdicts({{cfg(2).to_string(), "again"}}, ms, stats);
  EXPECT_EQ(stats.failed, 2u) << "a config is judged wrong once";
}

}  // namespace
}  // namespace kiln::internal
