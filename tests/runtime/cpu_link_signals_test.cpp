// Linking a CPU kernel with LLD in this process must leave the process's
// signal state as it was. LLD's first output file registers LLVM's signal
// handlers (SIGINT and SIGTERM then remove LLVM's temporary files and kill
// the process: Python's Ctrl-C and Kiln's own SIGTERM handling never ran)
// and gives the linking thread an alternate signal stack from malloc, which
// AddressSanitizer failed to unmap when the thread ended, killing `kiln
// bench tune` in the sanitizer run. Compiled and linked for real.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>
#include <vector>

#include "cpu_test_util.hpp"
#include "kiln/backends/cpu.hpp"

namespace kiln {
namespace {

void own_handler(int) {}

TEST(CpuLinkSignals, LinkingInProcessLeavesHandlersAndTheAltStackAlone) {
  struct sigaction mine {};
  mine.sa_handler = own_handler;
  sigemptyset(&mine.sa_mask);
  struct sigaction before_int {
  }, before_term{};
  ASSERT_EQ(::sigaction(SIGINT, &mine, &before_int), 0);
  ASSERT_EQ(::sigaction(SIGTERM, &mine, &before_term), 0);
  bool compiled = false, stack_kept = false;
  // On a thread of its own, as a compile pool's: the thread ends after.
  std::thread linker([&] {
    // A small stack of the thread's own, as a sanitizer's: LLVM replaced
    // any smaller than its own 64 KiB and more.
    std::vector<char> buffer(16 * 1024);
    stack_t own{buffer.data(), 0, buffer.size()};
    ASSERT_EQ(::sigaltstack(&own, nullptr), 0);
    auto program = cpu::make_compiler()->compile(
        test::scale_unit(4, BinaryFormat::kCpuSharedObject), CancelToken());
    compiled = program.ok() && program->format == BinaryFormat::kCpuSharedObject &&
               program->binary && !program->binary->empty();
    stack_t after{};
    ASSERT_EQ(::sigaltstack(nullptr, &after), 0);
    stack_kept = after.ss_sp == buffer.data() && after.ss_size == buffer.size();
    stack_t off{nullptr, SS_DISABLE, 0};
    ::sigaltstack(&off, nullptr);  // the buffer goes with this scope
  });
  linker.join();
  EXPECT_TRUE(compiled);
  EXPECT_TRUE(stack_kept) << "the thread's alternate signal stack was replaced";
  struct sigaction now {};
  ASSERT_EQ(::sigaction(SIGINT, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, own_handler) << "SIGINT's handler was replaced";
  ASSERT_EQ(::sigaction(SIGTERM, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, own_handler) << "SIGTERM's handler was replaced";
  ::sigaction(SIGINT, &before_int, nullptr);
  ::sigaction(SIGTERM, &before_term, nullptr);
}

}  // namespace
}  // namespace kiln
