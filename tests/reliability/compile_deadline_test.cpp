// A compile that never finishes (a runaway constexpr evaluation, as ptxas
// sometimes hangs on a GPU) is abandoned at its deadline without holding up
// the run: compiles run in worker processes (process_compilers), and the
// one past its deadline is killed. The other configs compile, are measured,
// and win.
#include "kiln/tuner/bench_worker.hpp"
#include "reliability_util.hpp"

namespace kiln {
namespace {

using namespace kiln::test;

// MODE 1 makes Clang evaluate two billion constexpr steps (minutes).
const std::string kRunawaySource = R"(
#include "kiln/cpu_kernel.h"
namespace t {
constexpr unsigned long runaway(unsigned long n) {
  unsigned long x = 0;
  for (unsigned long i = 0; i < n; ++i) x += i ^ (x >> 3);
  return x;
}
template <int UNROLL, int MODE>
void ax(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n, float a) {
  float extra = 0.0f;
  if constexpr (MODE == 1) {
    constexpr unsigned long v = runaway(2000000000UL + MODE);  // dependent: evaluated per instance
    extra = static_cast<float>(v & 1);
  }
)";

TEST(CompileDeadline, HungCompileIsKilledAndTheRunGoesOn) {
  Scratch s("compile_deadline");
  Backend b = cpu_backend(Isolation::kAuto);
  auto factory = process_compilers("cpu");
  ASSERT_TRUE(factory.ok()) << factory.error().describe();
  b.compiler_factory = *factory;
  Autotuner tuner(b, &s.artifacts, &s.tunings);

  TunableKernel k;
  k.tmpl.name = "runaway_ax";
  k.tmpl.source = kRunawaySource + ax_tail("extra");
  k.tmpl.entry = "t::ax<{UNROLL},{MODE}>";
  k.tmpl.options = {"-fconstexpr-steps=2147483647"};
  k.tmpl.space.param("UNROLL", {1, 4}).param("MODE", {0, 1});
  k.tmpl.space.constraint("runaway_once", [](const Config& c) {
    return c.get_int("UNROLL") == 1 || c.get_int("MODE") == 0;
  });
  k.tmpl.space.default_config(Config{{"UNROLL", std::int64_t{1}}, {"MODE", std::int64_t{0}}});
  k.launch = four_blocks;
  k.outputs = {"y"};

  AxCall call(1024);
  TuneOptions to;
  to.pipeline.compile_deadline_seconds = 3;
  to.pipeline.group_size = 1;  // the runaway config in a program of its own
  auto r = tuner.tune(k, call.args, *s.device, to);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  ASSERT_EQ(r->measurements.size(), 3u);
  const Measurement* hung = find_mode(*r, 1, 1);
  ASSERT_NE(hung, nullptr);
  EXPECT_EQ(hung->outcome, Outcome::kTimeout) << hung->reason();
  EXPECT_NE(hung->reason().find("passed its deadline of 3 s"), std::string::npos) << hung->reason();
  EXPECT_TRUE(find_mode(*r, 1, 0)->ok()) << find_mode(*r, 1, 0)->reason();
  EXPECT_TRUE(find_mode(*r, 4, 0)->ok()) << find_mode(*r, 4, 0)->reason();
  EXPECT_EQ(r->config.get_int("MODE"), 0);
  s.expect_caches_clean(1);
}

}  // namespace
}  // namespace kiln
