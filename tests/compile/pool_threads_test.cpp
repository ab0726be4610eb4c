// The compile pool when its worker threads cannot all start (a process or
// memory limit): it runs with the threads it got, or with none fails each
// unit with the reason; it never lets std::system_error escape its
// constructor, where the started threads would be destroyed joinable and
// std::terminate would take the tuner down ("terminate called without an
// active exception" from `kiln tune --threads 100000`).
#include <gtest/gtest.h>

#include "kiln/compile/compile_pool.hpp"
#include "skip.hpp"
#include "thread_limit.hpp"

namespace kiln {
namespace {

// Refuses every program at once: the pool, not compiling, is under test.
class RefusingCompiler final : public Compiler {
 public:
  std::string name() const override { return "refusing"; }
  std::string version() const override { return "1"; }
  std::vector<std::string> code_options() const override { return {}; }
  Result<CompiledProgram> compile(const CompileUnit&, const CancelToken&) override {
    return make_error(ErrorCode::kCompileFailed, "refused");
  }
};

CompileUnit unit(int n) {
  CompileUnit u;
  u.kernel = "k";
  u.arch = "host";
  u.specializations.push_back(
      Specialization{"k", Config{{"N", std::int64_t{n}}}, "k<" + std::to_string(n) + ">", {}, {}});
  return u;
}

constexpr int kAsked = 64;

TEST(PoolThreads, ThreadsThatCannotStartLeaveAWorkingPool) {
  if (testing::kSanitized)
    KILN_SKIP(Skip::kSanitizer) << "address-space limits break sanitizer runtimes";
  // Room for a couple of 8 MiB stacks, not 64.
  const int rc = testing::in_thread_limited_child(3 * testing::kChildStackBytes, [] {
    PoolOptions options;
    options.workers = kAsked;
    CompilePool pool(std::make_shared<RefusingCompiler>(), options);
    if (pool.workers() >= kAsked) return 10;
    if (pool.start_error().find("compile worker threads could start") == std::string::npos)
      return 11;
    for (int i = 0; i < 5; ++i) pool.submit(unit(i));
    int done = 0;
    while (auto d = pool.next()) done += d->result.entries.size() == 1 ? 1 : 0;
    return done == 5 ? 0 : 12;
  });
  EXPECT_EQ(rc, 0) << "134 is std::terminate; 10-12 a check in the child";
}

TEST(PoolThreads, NoThreadAtAllFailsEachUnitWithTheReason) {
  if (testing::kSanitized)
    KILN_SKIP(Skip::kSanitizer) << "address-space limits break sanitizer runtimes";
  const int rc = testing::in_thread_limited_child(1 << 20, [] {
    PoolOptions options;
    options.workers = 4;
    int delivered = 0;
    std::string reason;
    {
      CompilePool pool(std::make_shared<RefusingCompiler>(), options, [&](CompletedUnit done) {
        ++delivered;
        const auto& entry = done.result.entries.at(0);
        if (!entry.ok() && entry.error().code == ErrorCode::kUnavailable)
          reason = entry.error().message;
      });
      if (pool.workers() != 0) return 10;
      pool.submit(unit(1));
      pool.submit(unit(2));
      pool.wait_idle();  // returns: nothing is left pending
      if (pool.stats().completed != 2 || pool.stats().failed != 2) return 11;
    }
    if (delivered != 2) return 12;
    return reason.find("0 of 4 compile worker threads could start") != std::string::npos ? 0 : 13;
  });
  EXPECT_EQ(rc, 0) << "134 is std::terminate; 10-13 a check in the child";
}

TEST(PoolThreads, RequestsAboveTheBoundAreClamped) {
  EXPECT_EQ(resolve_workers(100000), kMaxCompileWorkers);
  EXPECT_EQ(resolve_workers(3), 3);
  EXPECT_GE(resolve_workers(0), 1);
}

}  // namespace
}  // namespace kiln
