// The "hybrid" search, the plan's default for large spaces: bayes proposes
// the opening, gp the rest from every measurement, and no config is
// proposed twice, even one the driver dropped without a report.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "kiln/search/search.hpp"
#include "kiln/search/search_plan.hpp"
#include "sanitized.hpp"
#include "search/internal/search_internal.hpp"
#include "search_drive.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

// A bowl over two ordered axes and a flag, with a failing corner.
ConfigSpace corner_space() {
  std::vector<Value> twelve;
  for (std::int64_t i = 0; i < 12; ++i) twelve.push_back(i);
  ConfigSpace space;
  space.param("x", twelve).param("y", twelve).param("flag", {true, false});
  return space;  // 288 configs
}

std::optional<double> corner_time(const Config& c) {
  const auto x = c.get_int("x"), y = c.get_int("y");
  if (x > 9 && y > 9) return std::nullopt;
  return 1.0 + 0.1 * static_cast<double>((x - 7) * (x - 7) + (y - 3) * (y - 3)) +
         (c.get_bool("flag") ? 0.0 : 0.5);
}

using test::TimeFn;

// `setup` with the budget bayes paces hybrid's opening by: the default
// plan's for the space, whatever the run's.
SearchSetup paced(SearchSetup setup) {
  setup.max_configs = effort_budget(setup.space->size(), SearchEffort::kDefault);
  return setup;
}

std::vector<Config> drive(SearchStrategy& search,
                          std::size_t rounds = std::numeric_limits<std::size_t>::max(),
                          const TimeFn& time = corner_time) {
  return test::drive_rounds(search, time, rounds);
}

TEST(HybridSearch, BayesProposesTheOpeningAndGpTheRest) {
  const ConfigSpace space = corner_space();
  const SearchSetup setup = test::search_setup(space, 100, 7);  // opening: 16, the least
  // The parts alone: no share from outside them (search_plateau_test.cpp).
  auto hybrid = internal::make_hybrid_search(setup, {});
  const std::vector<Config> got = drive(*hybrid);
  ASSERT_EQ(got.size(), 100u);

  // The opening is bayes's own run, config for config (its first round of
  // 8, then two of 4), paced by the default plan's budget (64 here).
  auto bayes = internal::bayes_strategy().make(paced(setup));
  const std::vector<Config> bayes_run = drive(*bayes, 3);
  ASSERT_EQ(bayes_run.size(), 16u);
  EXPECT_TRUE(std::equal(bayes_run.begin(), bayes_run.end(), got.begin()));

  // The rest is what gp proposes when told those 16 and then its own.
  auto gp = internal::make_gp_search(setup, 0);
  for (std::size_t i = 0; i < 16; ++i) gp->report(got[i], corner_time(got[i]));
  std::vector<Config> rest;
  for (std::size_t round = 0; round < 21; ++round) {
    for (const Config& c : gp->next(4)) {
      gp->report(c, corner_time(c));
      rest.push_back(c);
    }
  }
  ASSERT_EQ(rest.size(), 84u);
  EXPECT_TRUE(std::equal(rest.begin(), rest.end(), got.begin() + 16));

  // And the run finds the bowl's floor, which 100 random draws of 288
  // miss about 70% of the time.
  double best = 1e300;
  for (const Config& c : got)
    if (auto t = corner_time(c)) best = std::min(best, *t);
  EXPECT_EQ(best, 1.0);
}

// 0.6% of the space, within [16, 64], whatever the budget: a larger budget
// gives gp more, not bayes.
TEST(HybridSearch, TheOpeningIsAShareOfTheSpaceNotOfTheBudget) {
  KILN_SKIP_UNDER_TSAN("one thread's model arithmetic");  // 11 s under TSan
  std::vector<Value> sixty;
  for (std::int64_t i = 0; i < 60; ++i) sixty.push_back(i);
  ConfigSpace large;  // 3,600 configs: an opening of 22, mid-round (8, 4, 4, 4, then 2 + 2)
  large.param("a", sixty).param("b", sixty);
  const TimeFn valley = [](const Config& c) -> std::optional<double> {
    return 1.0 + 0.1 * std::abs(static_cast<double>(c.get_int("a") - 40)) +
           0.1 * std::abs(static_cast<double>(c.get_int("b") - 20));
  };
  const ConfigSpace small = corner_space();  // 288: 16, the least
  struct Case {
    const ConfigSpace* space;
    TimeFn time;
    std::size_t budget, opening;
  };
  for (const Case& k : {Case{&small, corner_time, 40, 16}, Case{&small, corner_time, 200, 16},
                        Case{&large, valley, 100, 22}, Case{&large, valley, 16, 16}}) {
    const SearchSetup setup = test::search_setup(*k.space, k.budget, 3);
    auto hybrid = internal::make_hybrid_search(setup, {});
    auto bayes = internal::bayes_strategy().make(paced(setup));
    const std::vector<Config> got = drive(*hybrid, 1000, k.time);
    const std::vector<Config> bayes_run = drive(*bayes, 1000, k.time);
    ASSERT_EQ(got.size(), k.budget);
    std::size_t same = 0;
    while (same < k.budget && got[same] == bayes_run[same]) ++same;
    // gp's first pick could by chance be bayes's next, so at least.
    EXPECT_GE(same, k.opening) << "budget " << k.budget;
    if (k.opening < k.budget) {
      EXPECT_LT(same, k.budget) << "gp takes over";
    }
  }
}

// A run's first configs do not depend on its budget: a 10% run is a 3%
// run that goes on (its parts' configs: a plateau's length is a share of
// the budget, so the outside share grows later in a longer run). (bayes paced the opening by the
// run's budget once, and a 10% run's best by 1% of the A100 convolution differed from a 3% run's:
// 0.32 of seeds 1-25 reaching 0.90 against 0.40.)
TEST(HybridSearch, ALargerBudgetContinuesTheSmallerRunsConfigs) {
  KILN_SKIP_UNDER_TSAN("one thread's model arithmetic");
  const ConfigSpace space = corner_space();
  std::vector<std::vector<Config>> runs;
  for (std::size_t budget : {20, 40, 120, 280}) {
    auto hybrid = internal::make_hybrid_search(test::search_setup(space, budget, 5), {});
    runs.push_back(drive(*hybrid));
    ASSERT_EQ(runs.back().size(), budget);
  }
  for (std::size_t r = 0; r + 1 < runs.size(); ++r)
    EXPECT_TRUE(std::equal(runs[r].begin(), runs[r].end(), runs[r + 1].begin()))
        << "the run of " << runs[r].size() << " configs is not where the run of "
        << runs[r + 1].size() << " began";
}

// The driver drops some proposals without a report (a neighbour's winner
// already measured, a config that failed in an earlier run): gp never
// heard of them, yet none comes back, and the budget is still spent.
TEST(HybridSearch, AProposalTheDriverDroppedIsNeverProposedAgain) {
  const ConfigSpace space = corner_space();
  auto hybrid = find_search_strategy("hybrid")->make(test::search_setup(space, 120, 5));
  std::set<std::string> proposed;
  std::size_t count = 0;
  std::size_t want = std::max<std::size_t>(4, hybrid->first_round());
  for (;; want = 4) {
    std::vector<Config> round = hybrid->next(want);
    if (round.empty()) break;
    for (const Config& c : round) {
      EXPECT_TRUE(proposed.insert(c.to_string()).second) << "twice: " << c.to_string();
      if (++count % 3 != 0) hybrid->report(c, corner_time(c));  // every third dropped
    }
  }
  EXPECT_EQ(count, 120u);
}

// A warm start's seeds (configs the search never proposed, told before its
// first round) reach gp, not bayes's opening: the opening is the cold
// run's, config for config, save the seed itself; gp's picks after it
// know the seed (a seed at the bowl's floor is never beaten).
TEST(HybridSearch, AWarmStartsSeedsReachGpNotTheOpening) {
  const ConfigSpace space = corner_space();
  const SearchSetup setup = test::search_setup(space, 60, 3);  // opening: 16
  auto cold = find_search_strategy("hybrid")->make(setup);
  const std::vector<Config> cold_run = drive(*cold);
  const Config best{{"x", std::int64_t{7}}, {"y", std::int64_t{3}}, {"flag", true}};
  ASSERT_EQ(std::count(cold_run.begin(), cold_run.begin() + 16, best), 0)
      << "pick another seed: the opening measures this one";

  auto warm = find_search_strategy("hybrid")->make(setup);
  warm->report(best, corner_time(best));  // measured by the driver, first
  const std::vector<Config> warm_run = drive(*warm);
  ASSERT_GE(warm_run.size(), 16u);
  EXPECT_TRUE(std::equal(cold_run.begin(), cold_run.begin() + 16, warm_run.begin()))
      << "the opening heard the seed";
  EXPECT_EQ(std::count(warm_run.begin(), warm_run.end(), best), 0) << "the seed proposed again";
  EXPECT_NE(std::vector<Config>(cold_run.begin() + 16, cold_run.end()),
            std::vector<Config>(warm_run.begin() + 16, warm_run.end()))
      << "gp did not hear the seed";
}

// gp past its bound (internal::GpBounds; search_gp.cpp, rebase()): once
// more configs were measured than `from`, the model conditions on a base
// of the fastest, some spread over the run and the latest, plus each
// epoch's measurements, and never on more; proposals are still new configs,
// every one measured is still remembered, a seed still repeats its run,
// and the run still finds the best. The bounds are the defaults scaled down
// (2,048 -> 48) so that the bounded mode is reached in a few hundred configs.
TEST(GpSearch, PastItsBoundTheModelStaysBoundedAndStillSearches) {
  KILN_SKIP_UNDER_TSAN("one thread's model arithmetic");
  const internal::GpBounds bounds{
      .from = 48, .best = 12, .spread = 6, .recent = 6, .epoch = 12, .candidates = 96};
  const std::size_t most = bounds.best + bounds.spread + bounds.recent + bounds.epoch;
  // 4,800 configs: a broad valley (its floor at a=31, b=9, c=2, found in
  // the first few dozen) and, far from it, a narrow well that holds the
  // best (a=6, b=33, c=0), found only later.
  std::vector<Value> forty;
  for (std::int64_t i = 0; i < 40; ++i) forty.push_back(i);
  ConfigSpace space;
  space.param("a", forty)
      .param("b", forty)
      .param("c", {std::int64_t{0}, std::int64_t{1}, std::int64_t{2}});
  const TimeFn valley = [](const Config& c) -> std::optional<double> {
    const auto a = c.get_int("a"), b = c.get_int("b");
    if (a < 4 && b < 4) return std::nullopt;  // a failing corner
    const auto well = (a - 6) * (a - 6) + (b - 33) * (b - 33) + 4 * c.get_int("c");
    if (well < 36) return 0.9 + 0.01 * static_cast<double>(well);
    return 1.0 + 0.02 * static_cast<double>((a - 31) * (a - 31) + (b - 9) * (b - 9)) +
           0.3 * static_cast<double>(2 - c.get_int("c"));
  };
  auto run = [&](std::uint64_t seed, std::size_t budget, std::size_t* most_rows) {
    auto gp = internal::make_gp_search(test::search_setup(space, budget, seed), 8, bounds);
    std::vector<Config> measured;
    std::size_t want = std::max<std::size_t>(4, gp->first_round());
    for (;; want = 4) {
      const std::vector<Config> round = gp->next(want);
      if (round.empty()) break;
      for (const Config& c : round) {
        gp->report(c, valley(c));
        measured.push_back(c);
      }
      const std::size_t rows = internal::gp_model_rows(*gp);
      if (measured.size() > bounds.from + 4) {
        EXPECT_LE(rows, most + 4) << "bounded, at " << measured.size();  // + a round's reports
      }
      *most_rows = std::max(*most_rows, rows);
    }
    return measured;
  };
  std::size_t rows = 0, again_rows = 0;
  const std::vector<Config> got = run(11, 600, &rows);
  ASSERT_EQ(got.size(), 600u);
  EXPECT_GT(rows, bounds.from) << "every measured config in the model up to the bound";
  std::set<std::string> unique;
  for (const Config& c : got) unique.insert(c.to_string());
  EXPECT_EQ(unique.size(), got.size()) << "a measured config is never proposed again";
  EXPECT_EQ(run(11, 600, &again_rows), got) << "a seed repeats its run";
  // The well is first entered, and its floor found, past the bound (a
  // model of every measured row finds the floor sooner: at 183).
  std::size_t in_well = 0, found_at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const std::optional<double> t = valley(got[i]);
    if (!in_well && t && *t < 1.0) in_well = i + 1;
    if (!found_at && t && *t == 0.9) found_at = i + 1;
  }
  EXPECT_GT(in_well, bounds.from) << "the well is found in the bounded mode, not before";
  EXPECT_NE(found_at, 0u) << "and its floor, the best";
  // And to the space's end: every config once, then nothing.
  EXPECT_EQ(run(5, 0, &rows).size(), space.cartesian_size());
}

// A space too large to keep every config's kernel values (more than
// bounds.pool cartesian configs; the hub's hotspot has 4.4 million) takes
// gp's candidates in epochs from its first fit (search_gp.cpp,
// draw_epoch()): `drawn` unmeasured configs, drawn afresh every `renew`
// measurements, from the listed configs where the setup has them, else by
// cartesian index. Either way it proposes each config once, a seed repeats
// its run, and it finds the narrow well's floor, the best, as the listed
// space's search does.
TEST(GpSearch, ASpaceTooLargeToKeepTakesItsCandidatesInEpochs) {
  KILN_SKIP_UNDER_TSAN("one thread's model arithmetic");
  std::vector<Value> forty;
  for (std::int64_t i = 0; i < 40; ++i) forty.push_back(i);
  ConfigSpace space;
  space.param("a", forty)
      .param("b", forty)
      .param("c", {std::int64_t{0}, std::int64_t{1}, std::int64_t{2}})
      // A fifth of the cartesian product is not in the space, so the
      // listed configs and the cartesian indices are drawn differently.
      .constraint("a+2b not a multiple of 5",
                  [](const Config& c) { return (c.get_int("a") + 2 * c.get_int("b")) % 5 != 0; });
  const TimeFn valley = [](const Config& c) -> std::optional<double> {
    const auto a = c.get_int("a"), b = c.get_int("b");
    if (a < 4 && b < 4) return std::nullopt;
    const auto well = (a - 6) * (a - 6) + (b - 33) * (b - 33) + 4 * c.get_int("c");
    if (well < 36) return 0.9 + 0.01 * static_cast<double>(well);
    return 1.0 + 0.02 * static_cast<double>((a - 31) * (a - 31) + (b - 9) * (b - 9)) +
           0.3 * static_cast<double>(2 - c.get_int("c"));
  };
  const std::vector<Config> listed = space.enumerate();
  auto run = [&](const internal::GpBounds& bounds, const std::vector<Config>* list,
                 std::uint64_t seed) {
    SearchSetup setup = test::search_setup(space, 300, seed);
    setup.listed = list;
    auto gp = internal::make_gp_search(setup, 8, bounds);
    return test::drive_rounds(*gp, valley);
  };
  auto floor_at = [&](const std::vector<Config>& got) {
    for (std::size_t i = 0; i < got.size(); ++i)
      if (valley(got[i]) == 0.9) return i + 1;
    return std::size_t{0};
  };
  const internal::GpBounds kept{};  // 3,840 configs: every one's values kept
  internal::GpBounds sampled{};
  sampled.pool = 1000;  // too large: epochs
  sampled.drawn = 400;
  sampled.renew = 16;
  std::vector<Config> by_list;
  for (const std::vector<Config>* list :
       {&listed, static_cast<const std::vector<Config>*>(nullptr)}) {
    SCOPED_TRACE(list ? "listed" : "drawn by index");
    const std::vector<Config> got = run(sampled, list, 3);
    ASSERT_EQ(got.size(), 300u);
    std::set<std::string> unique;
    for (const Config& c : got) {
      EXPECT_TRUE(space.contains(c)) << c.to_string();
      unique.insert(c.to_string());
    }
    EXPECT_EQ(unique.size(), got.size()) << "a config is never proposed twice";
    EXPECT_EQ(run(sampled, list, 3), got) << "a seed repeats its run";
    EXPECT_NE(run(kept, list, 3), got) << "the epochs change the picks";
    EXPECT_NE(floor_at(got), 0u) << "the well's floor, the best, is found";
    if (list) {
      by_list = got;
    } else {
      EXPECT_NE(got, by_list) << "drawn from the list, not by index, where there is one";
    }
  }
}

}  // namespace
}  // namespace kiln
