// The "Extending Kiln" recipe for a search strategy (docs/architecture.md),
// followed to the letter: a toy strategy defined in this file alone and
// added with one register_search_strategy line; nothing else in Kiln names
// it. It is then listed and found by name, a real tuning on the CPU backend
// (real Clang compiles, real timings) measures what it proposed, and a
// second registration under its name is refused with an error that says
// what to do.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "expect_refused.hpp"
#include "kiln/search/search.hpp"
#include "tune_session.hpp"

namespace kiln {
namespace {

// The toy: the space's valid configs from last to first, in one round.
class ReverseSearch : public SearchStrategy {
 public:
  explicit ReverseSearch(const ConfigSpace& space) : left_(space.enumerate()) {}
  const char* name() const override { return "reverse"; }
  std::vector<Config> next(std::size_t max_batch) override {
    std::vector<Config> out;
    while (!left_.empty() && out.size() < max_batch) {
      out.push_back(std::move(left_.back()));
      left_.pop_back();
    }
    return out;
  }
  void report(const Config&, std::optional<double>) override {}

 private:
  std::vector<Config> left_;
};

SearchStrategyInfo reverse_strategy() {
  return {"reverse", "the valid configs from last to first (a toy: tests/search)", 0,
          [](const SearchSetup& setup) { return std::make_unique<ReverseSearch>(*setup.space); }};
}

// The one line of the recipe, run once per process whichever test is first.
void register_toy() {
  static const bool registered = (register_search_strategy(reverse_strategy()), true);
  (void)registered;
}

TEST(ExtendingStrategy, ARegisteredStrategyIsListedAndFound) {
  register_toy();
  EXPECT_NE(search_strategy_names().find("reverse"), std::string::npos) << search_strategy_names();
  const SearchStrategyInfo* found = find_search_strategy("reverse");
  ASSERT_NE(found, nullptr);
  bool listed = false;
  for (const auto& s : search_strategies()) listed |= &s == found;
  EXPECT_TRUE(listed) << "search_strategies() lists the registered object itself";
  EXPECT_FALSE(search_is_steered("reverse"));
  // The built-in ones are still there, first.
  EXPECT_EQ(search_strategies()[0].name, "exhaustive");
}

// Eight configs that differ by name only (W), each a real compile; the
// default, W = 0, is first in enumeration order, so the toy proposes it last.
constexpr const char* kScaleSource = R"(
#include "kiln/cpu_kernel.h"
namespace toy {
template <int W>
void twice(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n) {
  if (ctx.block_idx.x != 0) return;
  for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 0.0f * W;
}
}  // namespace toy
)";

TunableKernel twice_kernel() {
  ConfigSpace space;
  space.param("W", {0, 1, 2, 3, 4, 5, 6, 7}).default_config(Config{{"W", std::int64_t{0}}});
  return testing::one_block_kernel("extending_strategy_test", kScaleSource, "toy::twice<{W}>",
                                   std::move(space));
}

TEST(ExtendingStrategy, ATuningRunsTheRegisteredStrategy) {
  register_toy();
  TunableKernel k = twice_kernel();
  std::vector<float> x(32, 1.5f), y(32, 0.0f);
  ArgList args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {32})),
                  Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {32})),
                  Arg::of_scalar("n", 32)};
  TuneOptions o;
  o.search.strategy = "reverse";
  o.search.max_configs = 4;  // the default and the toy's first three
  o.measure.target_seconds = 0.001;
  o.measure.max_reps = 5;
  o.pipeline.progress = false;
  o.cache.save = false;
  testing::Session s("extending_strategy");
  auto r = s.tuner.tune(k, args, **s.device, o);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  std::set<std::int64_t> measured;
  for (const auto& m : r->measurements) measured.insert(m.config.get_int("W"));
  EXPECT_EQ(measured, (std::set<std::int64_t>{0, 7, 6, 5}))
      << "the default, then the toy's proposals from the end of the space";
  EXPECT_EQ(r->measurements.size(), 4u);
}

TEST(ExtendingStrategy, ASecondRegistrationIsRefusedWithTheFix) {
  register_toy();
  auto refused = [](SearchStrategyInfo info, const std::string& says) {
    testing::expect_refused([&] { register_search_strategy(std::move(info)); }, says);
  };
  refused(reverse_strategy(), "\"reverse\" is registered already");
  refused(SearchStrategyInfo{"exhaustive", "a second exhaustive", 0, reverse_strategy().make},
          "register it once, or give it another name");
  refused(SearchStrategyInfo{"", "no name", 0, reverse_strategy().make}, "give it a name");
  refused(SearchStrategyInfo{"auto", "the plan's name", 0, reverse_strategy().make},
          "choose another name");
  refused(SearchStrategyInfo{"no_factory", "no factory", 0, nullptr},
          "set SearchStrategyInfo::make");
  EXPECT_EQ(find_search_strategy("no_factory"), nullptr);
  // The first registration stands.
  EXPECT_EQ(find_search_strategy("reverse")->description, reverse_strategy().description);
}

}  // namespace
}  // namespace kiln
