// The CPU device's block pool when its threads cannot all start (a process
// or memory limit): fewer runners, every block still run once, never
// std::terminate from a started thread destroyed joinable.
#include "cpu/block_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "thread_limit.hpp"

namespace kiln {
namespace {

TEST(BlockPool, ThreadsThatCannotStartLeaveFewerRunners) {
  if (testing::kSanitized) GTEST_SKIP() << "address-space limits break sanitizer runtimes";
  const int rc = testing::in_thread_limited_child(3 * testing::kChildStackBytes, [] {
    cpu::BlockPool pool(64);
    if (pool.threads() < 1 || pool.threads() >= 64) return 10;
    if (pool.start_error().find("of 64 block threads") == std::string::npos) return 11;
    std::atomic<std::uint64_t> sum{0};
    std::atomic<bool> runner_ok{true};
    pool.run(1000, [&](std::uint64_t block, int runner) {
      sum += block;
      if (runner < 0 || runner >= pool.threads()) runner_ok = false;
    });
    return sum == 999 * 1000 / 2 && runner_ok ? 0 : 12;
  });
  EXPECT_EQ(rc, 0) << "134 is std::terminate; 10-12 a check in the child";
}

}  // namespace
}  // namespace kiln
