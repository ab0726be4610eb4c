// The CPU device's block pool when its threads cannot all start (a process
// or memory limit): fewer runners, every block still run once, never
// std::terminate from a started thread destroyed joinable; and when a
// started thread gets no core: the launch does not wait for it.
#include "cpu/runtime/block_pool.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "skip.hpp"
#include "thread_limit.hpp"

namespace kiln {
namespace {

TEST(BlockPool, ThreadsThatCannotStartLeaveFewerRunners) {
  if (testing::kSanitized)
    KILN_SKIP(Skip::kSanitizer) << "address-space limits break sanitizer runtimes";
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

// A worker held in a signal handler stands for one the OS has not given a
// core: it is alive but has not joined the launch.
std::atomic<bool> worker_held{false};
std::atomic<bool> worker_release{false};

void hold_this_thread(int) {
  worker_held = true;
  const timespec ms{0, 1'000'000};
  while (!worker_release) nanosleep(&ms, nullptr);  // async-signal-safe
}

TEST(BlockPool, ALaunchDoesNotWaitForAWorkerThatNeverJoinedIt) {
  cpu::BlockPool pool(2);
  ASSERT_EQ(pool.threads(), 2) << pool.start_error();
  // Learn the worker's thread: block 0 (the caller) waits until the worker
  // has taken block 1.
  std::atomic<bool> seen_worker{false};
  pthread_t worker{};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  pool.run(2, [&](std::uint64_t, int runner) {
    if (runner != 0) {
      worker = pthread_self();
      seen_worker = true;
    }
    while (!seen_worker && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  ASSERT_TRUE(seen_worker) << "the worker never joined a launch";

  struct sigaction hold = {};
  struct sigaction before = {};
  hold.sa_handler = hold_this_thread;
  sigemptyset(&hold.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &hold, &before), 0);
  worker_held = false;
  worker_release = false;
  ASSERT_EQ(pthread_kill(worker, SIGUSR1), 0);
  while (!worker_held && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(worker_held) << "the signal never reached the pool's worker";

  std::atomic<bool> finished{false};
  std::atomic<std::uint64_t> sum{0};
  std::atomic<int> by_worker{0};
  std::thread launcher([&] {
    pool.run(1000, [&](std::uint64_t block, int runner) {
      sum += block;
      if (runner != 0) ++by_worker;
    });
    finished = true;
  });
  // A deadlock check, not a timing one: with the worker held for good the
  // launch would never end; 30 s is far beyond any machine's 1000 adds.
  while (!finished && std::chrono::steady_clock::now() < deadline + std::chrono::seconds(30))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool finished_while_held = finished;
  worker_release = true;
  launcher.join();
  sigaction(SIGUSR1, &before, nullptr);

  EXPECT_TRUE(finished_while_held) << "the launch waited for a worker that had not joined it";
  EXPECT_EQ(sum, 999u * 1000 / 2);
  EXPECT_EQ(by_worker, 0) << "the held worker ran blocks";
  // The released worker finds the launch closed and leaves it; the pool
  // still runs the next one whole.
  std::atomic<std::uint64_t> again{0};
  pool.run(100, [&](std::uint64_t block, int) { again += block; });
  EXPECT_EQ(again, 99u * 100 / 2);
}

}  // namespace
}  // namespace kiln
