// Replays on a sparse recorded space: 300 configs recorded out of the
// 2^30 of thirty binary parameters. Rejection sampling by index finds a
// recorded config once in millions of draws, so the sampler gave up (10,000
// misses in a row) long before the budget and steered strategies measured
// a few of the budget (on 2^20, where a draw in 3,500 hits, pattern measured 7). The replay hands
// the strategy the recorded configs (SearchSetup:: listed), and the sampler draws from the untaken
// ones when rejection fails.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/lab/recorded_space.hpp"
#include "kiln/lab/replay_tune.hpp"
#include "kiln/lab/search_replay.hpp"
#include "kiln/search/search.hpp"

namespace kiln {
namespace {

constexpr int kSparseParams = 30;
constexpr int kSparseRecords = 300;
// Past the 0-7 configs measured without the listed fallback, and small: every
// steered strategy's own candidate search is slow on so sparse a space (the
// two tests took 100 s each under ASan at a budget of 60).
constexpr std::size_t kSparseBudget = 24;

// A Kernel Tuner cache of kSparseRecords distinct configs drawn by a fixed
// seed, each with a run time that varies with its bits.
RecordedSpace sparse_space() {
  nlohmann::json file = {
      {"device_name", "Sparse GPU"}, {"kernel_name", "sparse"}, {"objective", "time"}};
  nlohmann::json keys = nlohmann::json::array(), params = nlohmann::json::object();
  for (int p = 0; p < kSparseParams; ++p) {
    keys.push_back("b" + std::to_string(p));
    params["b" + std::to_string(p)] = {0, 1};
  }
  file["tune_params_keys"] = keys;
  file["tune_params"] = params;
  std::mt19937_64 rng(42);
  std::set<std::uint64_t> drawn;
  nlohmann::json cache = nlohmann::json::object();
  while (drawn.size() < kSparseRecords) {
    const std::uint64_t bits = rng() & ((std::uint64_t{1} << kSparseParams) - 1);
    if (!drawn.insert(bits).second) continue;
    nlohmann::json record = {{"compile_time", 100}, {"benchmark_time", 10}};
    std::string key;
    int ones = 0;
    for (int p = 0; p < kSparseParams; ++p) {
      const int bit = static_cast<int>((bits >> p) & 1u);
      ones += bit;
      record["b" + std::to_string(p)] = bit;
      key += (p ? "," : "") + std::to_string(bit);
    }
    record["time"] = 1.0 + 0.1 * ones;
    cache[key] = record;
  }
  file["cache"] = cache;
  auto space = parse_recorded_space(file.dump(), "sparse.json");
  EXPECT_TRUE(space.ok()) << space.error().message;
  return space.ok() ? std::move(*space) : RecordedSpace{};
}

// Every strategy that samples (all but exhaustive, which walks the product
// in order and may stop at its own scan limit).
std::vector<std::string> sampling_strategies() {
  std::vector<std::string> out;
  for (const SearchStrategyInfo& s : search_strategies())
    if (s.name != "exhaustive") out.push_back(s.name);
  return out;
}

TEST(ReplaySparse, EverySamplingStrategyMeasuresTheWholeBudgetInASearchReplay) {
  const RecordedSpace space = sparse_space();
  ASSERT_EQ(space.configs.size(), static_cast<std::size_t>(kSparseRecords));
  for (const std::string& name : sampling_strategies()) {
    auto curve = replay_search(space, name, kSparseBudget, /*seed=*/1);
    ASSERT_TRUE(curve.ok()) << name << ": " << curve.error().message;
    EXPECT_EQ(curve->measured.size(), kSparseBudget) << name;
    std::set<std::string> distinct;
    for (const Config& c : curve->measured) {
      EXPECT_NE(space.find(c), nullptr) << name << ": {" << c.to_string() << "} not recorded";
      distinct.insert(c.to_string());
    }
    EXPECT_EQ(distinct.size(), curve->measured.size()) << name << ": a config measured twice";
  }
}

TEST(ReplaySparse, EverySamplingStrategyMeasuresTheWholeBudgetInATuneReplay) {
  const RecordedSpace space = sparse_space();
  for (const std::string& name : sampling_strategies()) {
    TuneOptions o;
    o.search.strategy = name;
    o.search.max_configs = kSparseBudget;
    o.search.seed = 3;
    auto run = replay_tune(space, o);
    ASSERT_TRUE(run.ok()) << name << ": " << run.error().message;
    EXPECT_EQ(run->measurements.size(), kSparseBudget) << name;
  }
}

}  // namespace
}  // namespace kiln
