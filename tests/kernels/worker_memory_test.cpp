// Benchmark workers and memory: a config that allocates without end fails
// in its own worker under KILN_WORKER_MEMORY, recorded as crashed, and the
// run goes on; and every worker offers itself to the kernel's OOM killer
// ahead of its tuner (oom_score_adj 1000), so memory running out ends a
// config, never the run. Real `kiln tune` processes on the CPU backend.
#include <fstream>

#include "cli_runner.hpp"
#include "sanitized.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

using testing::CliRun;
using testing::count_status;

// MODE 0: y = 2x. 1: block 0 takes 64 MiB blocks, touching each, up to
// 3 GiB, and traps on the first that is refused (without a cap it ends,
// slowly, and right). 2: right only where the process's oom_score_adj is
// 1000, so in a worker that offered itself.
const char* kMemorySource = R"(
#include <fcntl.h>
#include <unistd.h>
#include <cstdlib>
#include <cstring>
#include "kiln/cpu_kernel.h"
namespace t {
inline bool offered_to_oom_killer() {
  char text[8] = {};
  const int fd = open("/proc/self/oom_score_adj", O_RDONLY);
  if (fd < 0) return false;
  const long n = read(fd, text, sizeof text - 1);
  close(fd);
  return n >= 4 && std::strncmp(text, "1000", 4) == 0;
}
template <int MODE>
void ax(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n) {
  if (MODE == 1 && ctx.block_idx.x == 0) {
    constexpr std::size_t kBlock = std::size_t{64} << 20;
    void* taken[48] = {};
    for (int b = 0; b < 48; ++b) {
      taken[b] = std::malloc(kBlock);
      if (!taken[b]) __builtin_trap();
      std::memset(taken[b], 1, kBlock);
    }
    for (void* p : taken) std::free(p);
  }
  const float wrong = MODE == 2 && !offered_to_oom_killer() ? 1.0f : 0.0f;
  const int per = (n + static_cast<int>(ctx.grid_dim.x) - 1) / static_cast<int>(ctx.grid_dim.x);
  const int lo = static_cast<int>(ctx.block_idx.x) * per;
  const int hi = lo + per < n ? lo + per : n;
  for (int i = lo; i < hi; ++i) y[i] = 2.0f * x[i] + wrong;
}
}  // namespace t
)";

class WorkerMemory : public testing::CliTest {
 protected:
  // `kiln tune` of MODE in {0, `mode`} (the default 0) with `env`, killed
  // after 240 s so that a hang fails the test.
  CliRun tune(int mode, const std::string& env, const std::string& flags = "") {
    return tune_template(kMemorySource,
                         R"({"name": "worker_memory", "backend": "cpu",
      "space": {"parameters": [{"name": "MODE", "values": [0, )" +
                             std::to_string(mode) +
                             R"(]}], "default": {"MODE": 0}},
      "launch": {"grid": [4]},
      "args": [{"name": "x", "dtype": "f32", "shape": ["N"]},
               {"name": "y", "dtype": "f32", "shape": ["N"], "role": "output"},
               {"name": "n", "type": "i32", "value": "N"}]})",
                         "t::ax<{MODE}>", "N=4096", env, flags);
  }

  static nlohmann::json row(const nlohmann::json& r, int mode) {
    for (const auto& c : r["configs"])
      if (c["config"]["MODE"] == mode) return c;
    return nullptr;
  }
};

TEST_F(WorkerMemory, AConfigThatAllocatesWithoutEndFailsInItsWorkerAndTheRunGoesOn) {
#ifdef KILN_TEST_SANITIZED
  KILN_SKIP(Skip::kSanitizer) << "a data limit breaks the sanitizer runtimes in the worker";
#endif
  const CliRun run = tune(1, "KILN_WORKER_MEMORY=1G");
  ASSERT_EQ(run.exit_code, 0) << "stdout:\n" << run.out << "\nstderr:\n" << run.err;
  const nlohmann::json r = run.json();
  const nlohmann::json hog = row(r, 1);
  ASSERT_TRUE(hog.is_object()) << r.dump(2);
  EXPECT_EQ(hog["status"], "crashed") << hog.dump();
  EXPECT_NE(hog["reason"].get<std::string>().find("SIGILL"), std::string::npos) << hog.dump();
  EXPECT_EQ(r["winner"]["config"]["MODE"], 0) << r.dump(2);
  EXPECT_EQ(r["saved"], true);

  // A value that is no size is named, and the run goes on without a cap
  // (MODE 2: nothing to cap).
  const CliRun bad = tune(2, "KILN_WORKER_MEMORY=lots");
  EXPECT_EQ(bad.exit_code, 0) << bad.err;
  EXPECT_NE(bad.err.find("KILN_WORKER_MEMORY='lots'"), std::string::npos) << bad.err;
}

TEST_F(WorkerMemory, WorkersOfferThemselvesToTheOomKillerAheadOfTheirTuner) {
  const CliRun run = tune(2, "");
  ASSERT_EQ(run.exit_code, 0) << "stdout:\n" << run.out << "\nstderr:\n" << run.err;
  EXPECT_EQ(row(run.json(), 2)["status"], "ok") << run.out;

  // In threads, the tuner's own process runs the config: it keeps its
  // score, and MODE 2 is caught writing a wrong result. (Unless whatever
  // started this test offered it already.)
  if (testing::read_file("/proc/self/oom_score_adj").rfind("1000", 0) == 0)
    KILN_SKIP(Skip::kHost) << "this test process's oom_score_adj is 1000 already";
  const CliRun threads = tune(2, "", "--isolation thread --retune");
  ASSERT_EQ(threads.exit_code, 0) << threads.err;
  EXPECT_EQ(row(threads.json(), 2)["status"], "wrong_result") << threads.out;
}

}  // namespace
}  // namespace kiln
