// Model-based searches on a space too large to list whose configs are
// listed (SearchSetup::listed, as a recorded space's are): 600,000
// cartesian configs of which 2% are in the space, like the hub's hotspot
// (4.4 million, 2.4%). Drawn by cartesian index, a pick's 4,000 draws held
// about 80 configs; gp and bayes now draw their candidates from the
// list (search_gp.cpp draw_epoch(), search_bayes.cpp fit()). Whatever they draw, every proposal
// must be a config of the space, none twice, the run must repeat for a seed, and a smooth bowl's
// floor must be found within the budget.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "kiln/search/search.hpp"
#include "sanitized.hpp"
#include "search_drive.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

bool in_space(std::int64_t a, std::int64_t b, std::int64_t c) {
  return (7 * a + 3 * b + c) % 50 == 0;
}

ConfigSpace sparse_large_space() {
  std::vector<Value> hundred, sixty;
  for (std::int64_t i = 0; i < 100; ++i) hundred.push_back(i);
  for (std::int64_t i = 0; i < 60; ++i) sixty.push_back(i);
  ConfigSpace space;
  space.param("a", hundred).param("b", hundred).param("c", sixty);
  space.constraint("7a+3b+c a multiple of 50", [](const Config& c) {
    return in_space(c.get_int("a"), c.get_int("b"), c.get_int("c"));
  });
  return space;
}

// A bowl whose floor, (40, 70, 10), is in the space (280 + 210 + 10 = 500).
std::optional<double> bowl(const Config& c) {
  const auto a = c.get_int("a") - 40, b = c.get_int("b") - 70, cc = c.get_int("c") - 10;
  return 1.0 + 0.001 * static_cast<double>(a * a + b * b + cc * cc);
}

class ListedSearch : public ::testing::TestWithParam<std::string> {};

TEST_P(ListedSearch, ProposesListedConfigsOnceRepeatsForASeedAndFindsTheFloor) {
  KILN_SKIP_UNDER_TSAN("one thread's model arithmetic");
  const ConfigSpace space = sparse_large_space();
  ASSERT_GT(space.cartesian_size(), 500'000u) << "past the strategies' listing limit";
  std::vector<Config> listed;
  for (std::int64_t a = 0; a < 100; ++a)
    for (std::int64_t b = 0; b < 100; ++b)
      for (std::int64_t c = 0; c < 60; ++c)
        if (in_space(a, b, c))
          listed.push_back(Config{{"a", Value{a}}, {"b", Value{b}}, {"c", Value{c}}});
  ASSERT_EQ(listed.size(), 12'000u);
  auto run = [&](std::uint64_t seed) {
    SearchSetup setup = test::search_setup(space, 150, seed);
    setup.listed = &listed;
    auto search = test::strategy_named(GetParam()).make(setup);
    return test::drive_rounds(*search, bowl);
  };
  const std::vector<Config> got = run(2);
  ASSERT_EQ(got.size(), 150u);
  std::set<std::string> unique;
  bool floor = false;
  for (const Config& c : got) {
    EXPECT_TRUE(space.contains(c)) << c.to_string();
    unique.insert(c.to_string());
    floor = floor || bowl(c) == 1.0;
  }
  EXPECT_EQ(unique.size(), got.size()) << "a config proposed twice";
  EXPECT_TRUE(floor) << GetParam() << " did not find the floor in 150 of 12,000 configs";
  EXPECT_EQ(run(2), got) << "a seed repeats its run";
}

INSTANTIATE_TEST_SUITE_P(Strategies, ListedSearch, ::testing::Values("gp", "bayes", "hybrid"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace kiln
