// The ready queue alone, with real threads: a worker waits for an artifact
// or the close; a close hands back what waited and refuses what comes
// later, so every artifact ends exactly once.
#include "ready_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace kiln::internal {
namespace {

Artifact artifact_of(std::int64_t id) {
  Artifact a;
  a.config = Config{{"ID", id}};
  return a;
}

TEST(ReadyQueue, APopWaitsForAPushAndLeavesOnClose) {
  ReadyQueue queue;
  std::vector<std::int64_t> got;
  std::thread worker([&] {
    while (auto a = queue.pop()) got.push_back(a->config.get_int("ID"));
  });
  for (std::int64_t id : {3, 1, 2}) {
    Artifact a = artifact_of(id);
    ASSERT_TRUE(queue.push(a));
  }
  // The worker leaves only on close, after taking what was pushed first
  // (or close hands it back): nothing is lost either way.
  while (queue.size() > 0) std::this_thread::yield();
  std::vector<Artifact> left = queue.close("the run is over");
  worker.join();
  EXPECT_TRUE(left.empty());
  EXPECT_EQ(got, (std::vector<std::int64_t>{3, 1, 2})) << "in the order they landed";
}

TEST(ReadyQueue, CloseReturnsWhatWaitedAndRefusesLaterPushes) {
  ReadyQueue queue;
  for (std::int64_t id : {1, 2, 3}) {
    Artifact a = artifact_of(id);
    ASSERT_TRUE(queue.push(a));
  }
  std::vector<Artifact> left = queue.close("the tuning budget was spent");
  ASSERT_EQ(left.size(), 3u);
  EXPECT_EQ(left[0].config.get_int("ID"), 1);
  EXPECT_EQ(left[2].config.get_int("ID"), 3);
  Artifact late = artifact_of(4);
  EXPECT_FALSE(queue.push(late));
  EXPECT_EQ(late.config.get_int("ID"), 4) << "a refused artifact is left to the caller";
  EXPECT_FALSE(queue.pop().has_value());
  EXPECT_TRUE(queue.close("another reason").empty());
  EXPECT_EQ(queue.close_reason(), "the tuning budget was spent") << "the first reason stays";
}

TEST(ReadyQueue, EveryArtifactEndsExactlyOnceUnderAConcurrentClose) {
  // Producers and consumers race a close: each artifact is popped, handed
  // back by the close, or refused, and never two of these.
  ReadyQueue queue;
  constexpr int kProducers = 3, kEach = 400;
  std::atomic<int> popped{0}, refused{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < 2; ++c) {
    threads.emplace_back([&] {
      while (queue.pop()) ++popped;
    });
  }
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kEach; ++i) {
        Artifact a = artifact_of(p * kEach + i);
        if (!queue.push(a)) ++refused;
      }
    });
  }
  while (popped.load() < kEach) std::this_thread::yield();
  const std::size_t left = queue.close("stop").size();
  for (auto& t : threads) t.join();
  EXPECT_EQ(popped.load() + refused.load() + static_cast<int>(left), kProducers * kEach);
}

}  // namespace
}  // namespace kiln::internal
