// The result ledger alone: the progress bar and the judge see a result
// before it counts, and once the run has closed the ledger a late record
// (a worker left behind) reaches neither the results nor the caller's bar.
#include "result_ledger.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace kiln::internal {
namespace {

Measurement measured_ok(std::int64_t id) {
  Measurement m;
  m.config = Config{{"ID", id}};
  m.outcome = Outcome::kOk;
  return m;
}

TEST(ResultLedger, ARecordAfterCloseTouchesNothingTheCallerLent) {
  ProgressBar bar("k", 3, stderr, false);
  ResultLedger ledger(nullptr, &bar);
  ledger.record(measured_ok(1));
  ledger.record(not_run(Config{{"ID", std::int64_t{2}}}, Outcome::kTimeout, "hung"));
  EXPECT_EQ(ledger.count(), 2u);
  EXPECT_NE(bar.render().find("2/3 done"), std::string::npos) << bar.render();
  std::vector<Measurement> results = ledger.close();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].reason(), "hung");
  ledger.record(measured_ok(3));
  EXPECT_EQ(ledger.count(), 2u);
  EXPECT_NE(bar.render().find("2/3 done"), std::string::npos) << bar.render();
}

TEST(ResultLedger, AWaitEndsOnARecordFromAnotherThread) {
  ResultLedger ledger(nullptr, nullptr);
  std::uint64_t seen = 0;
  ledger.wait(&seen, std::chrono::steady_clock::now());  // catches up
  std::thread worker([&] { ledger.record(measured_ok(1)); });
  // No time limit that could pass first: the wait ends on the record.
  while (ledger.count() == 0) {
    ledger.wait(&seen, std::chrono::steady_clock::now() + std::chrono::hours(1));
  }
  worker.join();
  EXPECT_EQ(ledger.count(), 1u);
}

}  // namespace
}  // namespace kiln::internal
