// Two properties of the tuning run's parts (lib/tuner/pipeline.cpp), with
// real Clang compiles, the real LLJIT and the real artifact cache:
// - storing an artifact (files, fsyncs) holds no lock a benchmark worker
//   needs: a store stalled in the cache's writer does not stop a worker
//   from finishing one config and starting the next;
// - a thread worker on the caller's device (no Backend::open_device) that
//   hangs past its deadline is waited for: tune() does not return while its
//   kernel still runs on the caller's device and tensors.
#include <atomic>
#include <chrono>
#include <thread>

#include "kiln/cache/file_io.hpp"
#include "reliability_util.hpp"

namespace kiln {
namespace {

using namespace kiln::test;

// y = a * x. MODE 0 first waits for flags[0] (a gate) and then marks its
// config ID in flags[1]; MODE 1 waits for flags[2] and then sets flags[3].
const std::string kGatedSource = R"(
#include "kiln/cpu_kernel.h"
namespace t {
template <int ID, int MODE>
void ax(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n, float a, int* flags) {
  if (ctx.block_idx.x == 0) {
    while (__atomic_load_n(&flags[MODE == 0 ? 0 : 2], __ATOMIC_ACQUIRE) == 0) {
    }
    if (MODE == 0) __atomic_or_fetch(&flags[1], 1 << ID, __ATOMIC_ACQ_REL);
    if (MODE == 1) __atomic_store_n(&flags[3], 1, __ATOMIC_RELEASE);
  }
)" + ax_tail();

TunableKernel gated_kernel(std::vector<std::int64_t> ids, std::vector<std::int64_t> modes) {
  TunableKernel k;
  k.tmpl.name = "gated_ax";
  k.tmpl.source = kGatedSource;
  k.tmpl.entry = "t::ax<{ID},{MODE}>";
  std::vector<Value> id_values(ids.begin(), ids.end());
  std::vector<Value> mode_values(modes.begin(), modes.end());
  k.tmpl.space.param("ID", id_values).param("MODE", mode_values);
  k.tmpl.space.default_config(Config{{"ID", ids.front()}, {"MODE", std::int64_t{0}}});
  k.launch = four_blocks;
  k.outputs = {"y"};
  return k;
}

struct GatedCall : AxCall {
  int flags[4] = {0, 0, 0, 0};
  explicit GatedCall(int n) : AxCall(n) { args.push_back(Arg::of_scalar("flags", &flags[0])); }
  int load(int i) const { return __atomic_load_n(&flags[i], __ATOMIC_ACQUIRE); }
  void store(int i, int v) { __atomic_store_n(&flags[i], v, __ATOMIC_RELEASE); }
};

// The stalled store: the first chunk written opens the gate, then waits (up
// to 60 s) until configs 1 and 2 both ran, which takes a worker recording
// one result and taking the next artifact while this store is under way.
GatedCall* g_call = nullptr;
std::atomic<bool> g_stalled{false};
std::atomic<bool> g_both_ran_during_store{false};

void stall_until_both_ran(const std::filesystem::path&, std::size_t, std::size_t) {
  if (g_stalled.exchange(true)) return;
  g_call->store(0, 1);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < give_up) {
    if ((g_call->load(1) & 0b110) == 0b110) {
      g_both_ran_during_store = true;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST(PipelineParts, AStoreInProgressDoesNotHoldUpABenchmark) {
  Scratch s("store_lock");
  Autotuner tuner(cpu_backend(Isolation::kThread), &s.artifacts, &s.tunings);
  GatedCall call(1024);
  TuneOptions to;
  to.pipeline.bench_deadline_seconds = 300;  // a slow compile must not time the gated configs out
  // (1) Configs 1 and 2 compiled and stored, gate open.
  call.store(0, 1);
  auto warm = tuner.tune(gated_kernel({1, 2}, {0}), call.args, *s.device, to);
  ASSERT_TRUE(warm.ok()) << warm.error().describe();
  ASSERT_EQ(warm->stats.benchmarked, 2u);
  // (2) Configs 1 and 2 come from the cache and wait at the gate; config 3
  // compiles, and its store opens the gate and stalls.
  call.store(0, 0);
  call.store(1, 0);
  g_call = &call;
  cache::set_write_progress_hook(stall_until_both_ran);
  auto r = tuner.tune(gated_kernel({1, 2, 3}, {0}), call.args, *s.device, to);
  cache::set_write_progress_hook(nullptr);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->stats.artifact_hits, 2u);
  EXPECT_EQ(r->stats.benchmarked, 3u);
  ASSERT_TRUE(g_stalled.load()) << "config 3's store never reached the cache's writer";
  EXPECT_TRUE(g_both_ran_during_store.load())
      << "no benchmark finished while an artifact was being stored: the store holds a lock "
         "the benchmark workers need";
}

TEST(PipelineParts, AHungConfigOnTheCallersDeviceEndsBeforeTuneReturns) {
  Scratch s("borrowed_device");
  // No open_device: the only device is the caller's.
  Autotuner tuner(cpu_backend(Isolation::kThread), &s.artifacts, &s.tunings);
  GatedCall call(1024);
  TuneOptions to;
  to.pipeline.bench_deadline_seconds = 0.5;
  // MODE 1 waits at its gate, opened only when tune() returns or after 5 s
  // (long past its deadline; a slower machine only makes it not time out).
  call.store(0, 1);
  std::atomic<bool> returned{false};
  std::thread opener([&] {
    const auto open_at = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!returned && std::chrono::steady_clock::now() < open_at)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    call.store(2, 1);
  });
  auto r = tuner.tune(gated_kernel({1}, {0, 1}), call.args, *s.device, to);
  const int finished = call.load(3);
  returned = true;
  opener.join();
  EXPECT_EQ(finished, 1)
      << "tune() returned while a config still ran on the caller's device and tensors";
  ASSERT_TRUE(r.ok()) << r.error().describe();
}

}  // namespace
}  // namespace kiln
