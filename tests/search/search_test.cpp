#include "kiln/search/search.hpp"

#include <gtest/gtest.h>

#include <set>

#include "kiln/core/error.hpp"

namespace kiln {
namespace {

ConfigSpace big_space() {
  // 8^6 = 262,144 raw configs: too many to enumerate casually.
  ConfigSpace s;
  for (const char* name : {"A", "B", "C", "D", "E", "F"}) s.param(name, {0, 1, 2, 3, 4, 5, 6, 7});
  s.constraint("sum<=30", [](const Config& c) {
    std::int64_t sum = 0;
    for (const auto& [k, v] : c.values()) sum += std::get<std::int64_t>(v);
    return sum <= 30;
  });
  return s;
}

// A smooth synthetic cost with its minimum at A=3,B=5,C=1,D=6,E=2,F=4.
double cost(const Config& c) {
  const std::int64_t target[] = {3, 5, 1, 6, 2, 4};
  double total = 1.0;
  int i = 0;
  for (const char* name : {"A", "B", "C", "D", "E", "F"}) {
    double d = static_cast<double>(c.get_int(name) - target[i++]);
    total += d * d;
  }
  return total;
}

std::vector<Config> drain(SearchStrategy& s, std::size_t batch,
                          double (*cost_of)(const Config&) = cost) {
  std::vector<Config> all;
  while (true) {
    auto b = s.next(batch);
    if (b.empty()) return all;
    for (auto& c : b) {
      s.report(c, cost_of(c));
      all.push_back(c);
    }
  }
}

TEST(Search, ExhaustiveProposesEveryCandidateOnce) {
  ConfigSpace s;
  s.param("A", {1, 2, 3}).param("B", {1, 2});
  auto search = make_exhaustive_search(s.enumerate());
  auto all = drain(*search, 4, [](const Config&) { return 1.0; });
  EXPECT_EQ(all, s.enumerate());
}

TEST(Search, RandomIsSeededValidAndUnique) {
  ConfigSpace s = big_space();
  auto a = make_random_search(s, 50, 42);
  auto b = make_random_search(s, 50, 42);
  auto c = make_random_search(s, 50, 43);
  auto xa = drain(*a, 7), xb = drain(*b, 7), xc = drain(*c, 7);
  EXPECT_EQ(xa.size(), 50u);
  EXPECT_EQ(xa, xb);
  EXPECT_NE(xa, xc);
  std::set<std::string> unique;
  for (const auto& cfg : xa) {
    EXPECT_TRUE(s.contains(cfg)) << cfg.to_string();
    unique.insert(cfg.to_string());
  }
  EXPECT_EQ(unique.size(), 50u);
}

TEST(Search, RandomStopsWhenTheSpaceIsExhausted) {
  ConfigSpace s;
  s.param("A", {1, 2, 3});
  auto search = make_random_search(s, 100, 1);
  EXPECT_EQ(drain(*search, 2, [](const Config&) { return 1.0; }).size(), 3u);
}

TEST(Prune, TopKKeepsTheModelsBestInOrder) {
  ConfigSpace s;
  s.param("BM", {16, 32, 64, 128});
  ProblemKey problem("gemm");
  PerfModel model = [](const Config& c, const ProblemKey&) {
    return std::abs(static_cast<double>(c.get_int("BM")) - 60.0);
  };
  auto kept = prune_top_k(s.enumerate(), problem, model, 2);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].get_int("BM"), 64);
  EXPECT_EQ(kept[1].get_int("BM"), 32);
  EXPECT_EQ(prune_top_k(s.enumerate(), problem, model, 10).size(), 4u);
  EXPECT_THROW(prune_top_k(s.enumerate(), problem, nullptr, 2), Error);
}

TEST(Prune, EarlyPruneSeesTheProblem) {
  ConfigSpace s;
  s.param("BM", {16, 32, 64, 128});
  ProblemKey problem("gemm");
  problem.scalar("M", std::int64_t{40});
  EarlyPrune keep = [](const Config& c, const ProblemKey& p) {
    return c.get_int("BM") <= std::get<std::int64_t>(p.scalars().at("M"));
  };
  auto kept = prune_early(s.enumerate(), problem, keep);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept.back().get_int("BM"), 32);
}

}  // namespace
}  // namespace kiln
