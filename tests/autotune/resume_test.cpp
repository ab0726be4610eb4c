// An interrupted tuning resumes (issue 57 §4), through the C++ API on the
// CPU backend: real Clang compiles, real workers, real timings. A run
// stopped after some configs landed leaves their measurements in a
// journal beside the tuning cache; the next tuning of the key measures
// only what is missing, counts the rest as resumed, and removes the
// journal once it finishes. A spent budget keeps the journal too.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <vector>

#include "skip.hpp"
#include "tune_session.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::Session;

// Each call sleeps 2 ms: benchmarks last long enough for a run to be
// stopped between them.
constexpr const char* kNapSource = R"(
#include "kiln/cpu_kernel.h"
extern "C" int usleep(unsigned int);
namespace t {
template <int V>
void nap(const kiln::cpu::BlockContext&, const float* x, float* y, int n) {
  usleep(2000 + 100 * V);
  for (int i = 0; i < n; ++i) y[i] = x[i] * 2.0f;
}
}  // namespace t
)";

constexpr int kConfigs = 8;

TunableKernel nap_kernel() {
  ConfigSpace space;
  std::vector<Value> values;
  for (int v = 1; v <= kConfigs; ++v) values.emplace_back(std::int64_t{v});
  space.param("V", values);
  space.default_config(Config{{"V", std::int64_t{1}}});
  return testing::one_block_kernel("resume_nap", kNapSource, "t::nap<{V}>", space);
}

struct Call {
  std::vector<float> x = std::vector<float>(64, 1.5f), y = std::vector<float>(64, 0.0f);
  ArgList args{Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {64})),
               Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {64})),
               Arg::of_scalar("n", 64)};
};

// One config a compile unit, one benchmark worker: configs land one by one.
TuneOptions options() {
  TuneOptions o;
  o.search.strategy = "exhaustive";
  o.measure.target_seconds = 0.02;
  o.pipeline.compile_threads = 1;
  o.pipeline.group_size = 1;
  return o;
}

// Lines in the journals under `dir` (the tuning cache's directory).
std::size_t journal_lines(const fs::path& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir / "journal", ec), end; !ec && it != end; it.increment(ec)) {
    std::ifstream in(it->path());
    for (std::string line; std::getline(in, line);) n += !line.empty();
  }
  return n;
}

TEST(Resume, AnInterruptedTuningMeasuresOnlyWhatIsMissing) {
  Session s("resume_interrupted");
  ASSERT_TRUE(s.device.ok());
  Call call;
  const fs::path tuning = s.dir / "tuning";
  // (1) Stopped once three results are in the journal.
  TuneOptions cut = options();
  cut.pipeline.interrupted = [&] { return journal_lines(tuning) >= 3; };
  auto first = s.tuner.tune(nap_kernel(), call.args, **s.device, cut);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().code, ErrorCode::kCancelled);
  const std::size_t kept = journal_lines(tuning);
  ASSERT_GE(kept, 3u);
  ASSERT_LT(kept, static_cast<std::size_t>(kConfigs)) << "the run was not stopped early";

  // (2) Another process's worth of Kiln: the kept configs (the default
  // aside: it is the outputs' reference) are not measured again.
  TuningCache tunings(s.opts);
  Autotuner tuner(testing::cpu_backend(), &s.artifacts, &tunings);
  auto second = tuner.tune(nap_kernel(), call.args, **s.device, options());
  ASSERT_TRUE(second.ok()) << second.error().describe();
  EXPECT_EQ(second->source, ResultSource::kTuned);
  EXPECT_EQ(second->stats.resumed, kept - 1);
  EXPECT_EQ(second->measurements.size(), static_cast<std::size_t>(kConfigs));
  EXPECT_EQ(second->stats.compiled + second->stats.artifact_hits, kConfigs - (kept - 1))
      << "only the missing configs and the default were built";
  EXPECT_TRUE(second->saved) << second->not_saved_reason;
  EXPECT_EQ(journal_lines(tuning), 0u) << "a finished run removes its journal";
}

TEST(Resume, ASpentBudgetKeepsTheJournalForTheNextTuning) {
  Session s("resume_budget");
  ASSERT_TRUE(s.device.ok());
  Call call;
  const fs::path tuning = s.dir / "tuning";
  // (0) Every artifact built by a tuning of another problem, so that the
  // budget below is spent on benchmarks alone.
  Call other;
  other.args.back() = Arg::of_scalar("n", 32);
  ASSERT_TRUE(s.tuner.tune(nap_kernel(), other.args, **s.device, options()).ok());
  // (1) A budget that ends the run part way: its best so far is saved,
  // and what it measured stays in the journal.
  TuneOptions cut = options();
  cut.measure.target_seconds = 0.05;
  cut.measure.early_stop = 0;  // each config fills target_seconds: 4 or so fit the budget
  cut.pipeline.budget_seconds = 0.2;
  auto first = s.tuner.tune(nap_kernel(), call.args, **s.device, cut);
  ASSERT_TRUE(first.ok()) << first.error().describe();
  const std::size_t kept = journal_lines(tuning);
  if (kept < 2 || kept >= static_cast<std::size_t>(kConfigs))
    KILN_SKIP(Skip::kHost) << "the budget landed " << kept << " configs of " << kConfigs
                           << ": this machine is too slow or too fast for it";
  // (2) Tuning the key again (its record is there: a retune) goes on
  // from the journal.
  TuneOptions again = options();
  again.cache.retune = true;
  TuningCache tunings(s.opts);
  Autotuner tuner(testing::cpu_backend(), &s.artifacts, &tunings);
  auto second = tuner.tune(nap_kernel(), call.args, **s.device, again);
  ASSERT_TRUE(second.ok()) << second.error().describe();
  EXPECT_EQ(second->stats.resumed, kept - 1) << "all but the default, the outputs' reference";
  EXPECT_EQ(second->measurements.size(), static_cast<std::size_t>(kConfigs));
  EXPECT_EQ(journal_lines(tuning), 0u);
}

}  // namespace
}  // namespace kiln
