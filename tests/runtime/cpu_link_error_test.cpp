// A CPU kernel that calls something the JIT cannot resolve: the load error
// must name the missing symbol and say what a kernel may use. LLVM ORC
// reports the missing symbols through its session's error reporter, not
// through the failed lookup, so without Kiln's reporter the error said only
// "cannot link symbol 'kiln_entry_0'" and the symbol went to stderr.
// Compiled and linked for real: Clang, then LLJIT.
#include <gtest/gtest.h>

#include "cpu_test_util.hpp"
#include "kiln/backends/cpu.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln {
namespace {

// Declared, never defined anywhere: no process library exports it.
constexpr const char* kUnresolvedSource = R"(#include "kiln/cpu_kernel.h"
extern "C" float kiln_test_symbol_nobody_defines(float);
template <int N>
void calls_missing(const kiln::cpu::BlockContext&, float* x) {
  for (int i = 0; i < N; ++i) x[i] = kiln_test_symbol_nobody_defines(x[i]);
}
)";

Artifact unresolved_artifact(CompileUnit& unit, BinaryFormat format = BinaryFormat::kCpuObject) {
  Specialization s;
  s.kernel = "calls_missing";
  s.config = Config{{"N", std::int64_t{4}}};
  s.entry = "calls_missing<4>";
  unit = test::cpu_unit("calls_missing", kUnresolvedSource, {s});
  unit.format = format;
  auto program = cpu::make_compiler()->compile(unit, CancelToken());
  EXPECT_TRUE(program.ok()) << program.error().describe();
  if (!program.ok()) return Artifact{};
  return test::artifact_of(unit, *program, 0);
}

TEST(CpuLinkError, NamesTheMissingSymbolAndWhatAKernelMayUse) {
  CompileUnit unit;
  const Artifact artifact = unresolved_artifact(unit);
  ASSERT_TRUE(artifact.binary);
  auto device = cpu::open_device(1);
  ASSERT_TRUE(device.ok()) << device.error().describe();
  auto kernel = (*device)->load(artifact);
  ASSERT_FALSE(kernel.ok());
  const std::string text = kernel.error().describe();
  EXPECT_NE(text.find("kiln_test_symbol_nobody_defines"), std::string::npos) << text;
  EXPECT_NE(text.find("exceptions"), std::string::npos) << text;  // the fix, named
  EXPECT_NE(text.find("calls_missing<4>"), std::string::npos) << text;

  // A second load of the same object (a cached, failed module) still names it.
  auto again = (*device)->load(artifact);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().describe().find("kiln_test_symbol_nobody_defines"), std::string::npos)
      << again.error().describe();
}

// The stored form (a shared object, dlopen'ed with RTLD_NOW) says the same:
// the missing symbol, the kernel and what a kernel may use.
TEST(CpuLinkError, ASharedObjectNamesTheMissingSymbolToo) {
  CompileUnit unit;
  const Artifact artifact = unresolved_artifact(unit, BinaryFormat::kCpuSharedObject);
  ASSERT_TRUE(artifact.binary);
  EXPECT_EQ(artifact.format, BinaryFormat::kCpuSharedObject);
  auto device = cpu::open_device(1);
  ASSERT_TRUE(device.ok()) << device.error().describe();
  auto kernel = (*device)->load(artifact);
  ASSERT_FALSE(kernel.ok());
  const std::string text = kernel.error().describe();
  EXPECT_NE(text.find("kiln_test_symbol_nobody_defines"), std::string::npos) << text;
  EXPECT_NE(text.find("exceptions"), std::string::npos) << text;
  EXPECT_NE(text.find("calls_missing<4>"), std::string::npos) << text;
}

}  // namespace
}  // namespace kiln
