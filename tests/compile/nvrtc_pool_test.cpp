// The compile pool with real NVRTC: completion stream, callback, cancellation
// of queued and running units, PCH.
#include <gtest/gtest.h>

#include <atomic>
#include <set>

#include "cuda/nvrtc_api.hpp"
#include "cuda/nvrtc_compiler.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/compile/compile_pool.hpp"
#include "skip.hpp"
#include "test_kernels.hpp"

namespace kiln {
namespace {

class Pool : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::nvrtc().ok()) KILN_SKIP(Skip::kCudaToolkit) << cuda::nvrtc().error().describe();
    options_.context.toolchain = current_toolchain("cuda");
    options_.context.env = CacheEnvRegistry::global().snapshot();
  }
  std::vector<CompileUnit> units(std::size_t group_size) {
    auto t = test::scale_kernel();
    std::vector<Specialization> specs;
    for (std::int64_t n : {1, 2, 3, 4, 5, 6}) specs.push_back(t.specialize(Config{{"N", n}}));
    return group(t, specs, GroupOptions{group_size, "sm_80", BinaryFormat::kCubin});
  }
  PoolOptions options_;
};

TEST_F(Pool, StreamsEveryUnitOnceInCompletionOrder) {
  options_.workers = 2;
  CompilePool pool(std::make_shared<cuda::NvrtcCompiler>(), options_);
  EXPECT_EQ(pool.workers(), 2);
  auto tickets = pool.submit_all(units(2));
  ASSERT_EQ(tickets.size(), 3u);
  std::set<std::uint64_t> seen;
  std::set<int> workers;
  while (auto done = pool.next()) {
    EXPECT_TRUE(seen.insert(done->ticket).second);
    workers.insert(done->worker);
    EXPECT_EQ(done->result.ok_count(), 2u);
  }
  EXPECT_EQ(seen, std::set<std::uint64_t>(tickets.begin(), tickets.end()));
  auto stats = pool.stats();
  EXPECT_EQ(stats.completed, 3u);
  EXPECT_EQ(stats.artifacts, 6u);
  EXPECT_EQ(stats.programs, 3u);
  EXPECT_FALSE(pool.next().has_value());  // drained: does not block
}

TEST_F(Pool, CallbackSeesEachUnitAndMaySubmitMore) {
  options_.workers = 2;
  std::atomic<int> calls{0};
  std::atomic<int> artifacts{0};
  CompilePool* self = nullptr;
  auto more = units(6);
  CompilePool pool(std::make_shared<cuda::NvrtcCompiler>(), options_, [&](CompletedUnit done) {
    artifacts += static_cast<int>(done.result.ok_count());
    if (calls++ == 0) self->submit(more.at(0));  // re-entrant submit from the callback
  });
  self = &pool;
  pool.submit_all(units(3));
  pool.wait_idle();
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(artifacts.load(), 12);
}

TEST_F(Pool, CancelAllCompletesQueuedUnitsAsCancelled) {
  options_.workers = 1;
  CompilePool pool(std::make_shared<cuda::NvrtcCompiler>(), options_);
  pool.submit_all(units(1));  // six units, one worker: five stay queued
  pool.cancel_all();
  int cancelled = 0, total = 0;
  while (auto done = pool.next()) {
    ++total;
    for (const auto& e : done->result.entries) {
      if (!e.ok()) {
        EXPECT_EQ(e.error().code, ErrorCode::kCancelled);
        ++cancelled;
      }
    }
  }
  EXPECT_EQ(total, 6);
  EXPECT_GE(cancelled, 5);
}

TEST_F(Pool, OneUnitsTokenCancelsOnlyThatUnit) {
  options_.workers = 1;
  CompilePool pool(std::make_shared<cuda::NvrtcCompiler>(), options_);
  auto us = units(3);
  CancelToken cancel;
  cancel.cancel();
  auto a = pool.submit(us[0], cancel);
  auto b = pool.submit(us[1]);
  while (auto done = pool.next()) {
    if (done->ticket == a) {
      EXPECT_EQ(done->result.ok_count(), 0u);
    } else {
      EXPECT_EQ(done->ticket, b);
      EXPECT_EQ(done->result.ok_count(), 3u);
    }
  }
}

TEST_F(Pool, DestructorCancelsAndJoins) {
  options_.workers = 2;
  auto pool = std::make_unique<CompilePool>(std::make_shared<cuda::NvrtcCompiler>(), options_);
  pool->submit_all(units(1));
  pool.reset();  // must not hang or crash with work queued and running
  SUCCEED();
}

TEST_F(Pool, PchIsCreatedOnceAndReusedWithIdenticalCode) {
  auto t = test::scale_kernel();
  // PCH applies to the #include block at the top of the source.
  t.source = "#include <cuda/std/limits>\n" + t.source;
  auto make = [&](std::int64_t n) {
    return group(t, {t.specialize(Config{{"N", n}})},
                 GroupOptions{1, "sm_80", BinaryFormat::kCubin})
        .at(0);
  };
  auto settings = cuda::NvrtcSettings::from_options(Options::global());
  settings.pch = true;
  cuda::NvrtcCompiler with_pch(settings);
  settings.pch = false;
  cuda::NvrtcCompiler without(settings);
  auto first = with_pch.compile(make(1), CancelToken());
  ASSERT_TRUE(first.ok()) << first.error().describe();
  auto second = with_pch.compile(make(2), CancelToken());
  ASSERT_TRUE(second.ok()) << second.error().describe();
  auto plain = without.compile(make(2), CancelToken());
  ASSERT_TRUE(plain.ok()) << plain.error().describe();
  const auto& api = **cuda::nvrtc();
  if (!api.GetPCHCreateStatus) KILN_SKIP(Skip::kCudaToolkit) << "this NVRTC has no PCH";
  EXPECT_NE(std::string(first->options.back()).find("-pch-dir="), std::string::npos);
  EXPECT_NE(first->log.find("creating precompiled header"), std::string::npos) << first->log;
  EXPECT_NE(second->log.find("using precompiled header"), std::string::npos) << second->log;
  EXPECT_EQ(second->log.find("#629"), std::string::npos) << second->log;
  EXPECT_EQ(*second->binary, *plain->binary) << "PCH must not change generated code";
  // An option set of its own gets a PCH directory of its own (no 629 probing).
  auto other = make(3);
  other.options.push_back("-DKILN_TEST_OTHER=1");
  auto third = with_pch.compile(other, CancelToken());
  ASSERT_TRUE(third.ok());
  EXPECT_NE(third->options.back(), second->options.back());
  EXPECT_EQ(third->log.find("#629"), std::string::npos) << third->log;
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST(PchHeap, GrowsToWhatNvrtcAsksFor) {
  if (!cuda::nvrtc().ok()) KILN_SKIP(Skip::kCudaToolkit) << cuda::nvrtc().error().describe();
  const auto& api = **cuda::nvrtc();
  if (!api.SetPCHHeapSize || !api.GetPCHHeapSize)
    KILN_SKIP(Skip::kCudaToolkit) << "this NVRTC has no PCH heap";
  std::size_t before = 0;
  api.GetPCHHeapSize(&before);
  ASSERT_EQ(api.SetPCHHeapSize(1 << 20), NVRTC_SUCCESS);  // far too small for CCCL
  auto t = test::scale_kernel();
  t.source = "#include <cuda/std/limits>\n" + t.source;
  auto settings = cuda::NvrtcSettings::from_options(Options::global());
  settings.pch = true;
  cuda::NvrtcCompiler compiler(settings);
  auto first = compiler.compile(test::single_unit(t, 1), CancelToken());
  ASSERT_TRUE(first.ok()) << first.error().describe();  // a PCH that does not fit is no error
  std::size_t after = 0;
  api.GetPCHHeapSize(&after);
  EXPECT_GT(after, std::size_t{1} << 20) << "the heap was grown to NVRTC's requirement";
  auto second = compiler.compile(test::single_unit(t, 2), CancelToken());
  ASSERT_TRUE(second.ok());
  auto third = compiler.compile(test::single_unit(t, 3), CancelToken());
  ASSERT_TRUE(third.ok());
  EXPECT_NE(third->log.find("using precompiled header"), std::string::npos)
      << second->log << "\n---\n"
      << third->log;
  api.SetPCHHeapSize(std::max(before, after));
}

}  // namespace
}  // namespace kiln
