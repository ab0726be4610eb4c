// The annealing strategy as the tuner drives it: rounds of proposals, the
// round's results reported back in proposal order, the default config as the
// walk's start. Synthetic costs, no timing: what a walk may depend on.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "kiln/core/error.hpp"
#include "kiln/tuner/search.hpp"

namespace kiln {
namespace {

ConfigSpace grid() {
  ConfigSpace s;
  s.param("X", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}).param("Y", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  return s;
}

double distance(const Config& c) {  // to the best, X = 7, Y = 2
  return static_cast<double>(std::abs(c.get_int("X") - 7) + std::abs(c.get_int("Y") - 2));
}

// Runs a search as the tuner does: the start reported first, then rounds
// of `round` proposals, each reported in proposal order.
std::vector<std::string> walk(AnnealingOptions o, double (*cost)(const Config&),
                              std::size_t round = 3) {
  auto search = make_annealing_search(grid(), o);
  if (o.start) search->report(*o.start, cost(*o.start));
  std::vector<std::string> out;
  while (true) {
    auto batch = search->next(round);
    if (batch.empty()) return out;
    for (const auto& c : batch) {
      search->report(c, cost(c));
      out.push_back(c.to_string());
    }
  }
}

AnnealingOptions options(std::uint64_t seed) {
  AnnealingOptions o;
  o.budget = 30;
  o.random_start = 4;
  o.seed = seed;
  o.start = Config{{"X", std::int64_t{0}}, {"Y", std::int64_t{9}}};
  return o;
}

TEST(Annealing, TheSameSeedAndTimesWalkTheSameWay) {
  auto linear = [](const Config& c) { return 1.0 + distance(c); };
  EXPECT_EQ(walk(options(5), linear), walk(options(5), linear));
  EXPECT_NE(walk(options(5), linear), walk(options(6), linear));
}

TEST(Annealing, AtLowTemperatureOnlyTheOrderOfTimesMatters) {
  // Two cost functions with the same order and very different magnitudes:
  // the walk makes the same moves, because one random number is drawn per
  // report whether or not a slower config is being weighed.
  auto linear = [](const Config& c) { return 1.0 + distance(c); };
  auto steep = [](const Config& c) { return std::pow(1.0 + distance(c), 3.0); };
  AnnealingOptions o = options(9);
  o.initial_temperature = 1e-4;
  o.final_temperature = 1e-5;
  auto a = walk(o, linear), b = walk(o, steep);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 30u);
}

TEST(Annealing, TheStartIsNeverProposedAndTheWalkLeavesFromIt) {
  AnnealingOptions o = options(3);
  o.random_start = 0;
  auto search = make_annealing_search(grid(), o);
  search->report(*o.start, 100.0);
  auto first = search->next(2);
  ASSERT_EQ(first.size(), 2u);
  for (const auto& c : first) {
    EXPECT_NE(c, *o.start);
    // One parameter moved one step: from (0, 9), (1, 9) or (0, 8).
    EXPECT_EQ(std::abs(c.get_int("X") - 0) + std::abs(c.get_int("Y") - 9), 1) << c.to_string();
  }
  while (true) {
    auto b = search->next(4);
    if (b.empty()) break;
    for (const auto& c : b) {
      EXPECT_NE(c, *o.start);
      search->report(c, 1.0 + distance(c));
    }
  }
}

TEST(Annealing, AStartOutsideTheSpaceIsMisuse) {
  AnnealingOptions o = options(1);
  o.start = Config{{"X", std::int64_t{42}}, {"Y", std::int64_t{0}}};
  try {
    make_annealing_search(grid(), o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("X=42"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
