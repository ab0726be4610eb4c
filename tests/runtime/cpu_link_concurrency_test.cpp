// Compiles on several threads at once, each linking its shared object with
// LLD in this process. LLD's driver resets every LLVM option to its default
// and registers every target again, process-wide, while a compile on another
// thread reads the same globals: a tuning run with two compile threads died
// of that under ThreadSanitizer (cl::ResetAllOptionOccurrences against
// StandardInstrumentations::registerCallbacks). A link now waits until no
// thread uses LLVM (backends/cpu/llvm_lock.hpp). Under TSan this test fails
// without that; everywhere it checks that the lock deadlocks nothing and
// that every compile succeeds, one thread compiling objects that need no
// link and loading them with LLVM's JIT between the others' links.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "cpu/host_jit.hpp"
#include "cpu_test_util.hpp"
#include "kiln/backends/cpu.hpp"

namespace kiln {
namespace {

// Loads `program` (a cpu_object) with LLVM's JIT and looks up its entry;
// false, with the reason in `error`, when either fails.
bool loaded(const CompiledProgram& program, std::string& error) {
  auto jit = cpu::HostJit::shared();
  if (!jit) {
    error = jit.error().message;
    return false;
  }
  auto module = (*jit)->load(*program.binary, "scale");
  if (!module) {
    error = module.error().message;
    return false;
  }
  auto entry = (*module)->lookup(program.lowered_names.at(0));
  if (!entry) error = entry.error().message;
  return entry.ok();
}

TEST(CpuLinkConcurrency, CompilesOnOtherThreadsRunWhileOneLinks) {
  constexpr int kThreads = 3;
  constexpr int kEach = 2;
  std::atomic<int> good{0};
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &good, &errors] {
      auto compiler = cpu::make_compiler();
      for (int i = 0; i < kEach; ++i) {
        // The last thread compiles objects (no LLD link) and loads them with
        // LLVM's JIT between the others' links, as an old cpu_object entry.
        const BinaryFormat format =
            t == kThreads - 1 ? BinaryFormat::kCpuObject : BinaryFormat::kCpuSharedObject;
        auto program =
            compiler->compile(test::scale_unit(4 + t * kEach + i, format), CancelToken());
        if (!program.ok()) {
          errors[t] = program.error().message;
          return;
        }
        if (program->format != format || !program->binary || program->binary->empty()) continue;
        if (format == BinaryFormat::kCpuObject) {
          if (!loaded(*program, errors[t])) return;
        }
        ++good;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
  EXPECT_EQ(good.load(), kThreads * kEach);
}

}  // namespace
}  // namespace kiln
