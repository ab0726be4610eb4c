#include "fma_peak.hpp"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace kiln::tool {

namespace {

using PeakClock = std::chrono::steady_clock;

// NOTES: 12 chains: two FMA ports with a latency of 4-5 cycles keep 8-10
// FMAs in flight; 12 accumulators and the two operands fit AVX2's 16
// registers, so nothing spills. The chains converge (x < 1), never to a
// denormal or infinity that would slow them.
constexpr int kChains = 12;

// Each returns its accumulators' sum so that the loop is not dead code.
__attribute__((target("avx2,fma"))) float fma_loop_avx2(long iterations) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(0.001f);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], x, y);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  alignas(32) float out[8];
  _mm256_store_ps(out, sum);
  return out[0];
}

__attribute__((target("avx512f"))) float fma_loop_avx512(long iterations) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(0.001f);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], x, y);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  alignas(64) float out[16];
  _mm512_store_ps(out, sum);
  return out[0];
}

using FmaLoop = float (*)(long);

// Seconds for `threads` threads to run `iterations` each, started together.
double run_together(FmaLoop loop, int threads, long iterations) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::atomic<float> sink{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      sink.store(loop(iterations), std::memory_order_relaxed);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  const auto start = PeakClock::now();
  go.store(true);
  for (auto& t : pool) t.join();
  return std::chrono::duration<double>(PeakClock::now() - start).count();
}

// GFLOP/s of `loop` (`lanes` floats a vector): tries of about 20 ms (scaled
// from a short first run, which also wakes the vector unit) for 0.4 s, the
// best of them. NOTES: many short tries rather than a few long ones: the
// peak is a maximum, and on a shared machine a short try is likelier to
// find both cores free.
double loop_peak(FmaLoop loop, int lanes, int threads) {
  long iterations = 1 << 12;
  double once = run_together(loop, threads, iterations);
  for (; once < 0.002; once = run_together(loop, threads, iterations)) iterations *= 4;
  iterations = std::max(1L, static_cast<long>(static_cast<double>(iterations) * 0.02 / once));
  const double flops = 2.0 * lanes * kChains * static_cast<double>(iterations) * threads;
  double best = 0, spent = 0;
  for (int tries = 0; tries < 64 && spent < 0.4; ++tries) {
    const double s = run_together(loop, threads, iterations);
    spent += s;
    best = std::max(best, flops / s * 1e-9);
  }
  return best;
}

}  // namespace

FmaPeak measure_fma_peak(int threads) {
  FmaPeak peak;
  peak.threads = threads;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    peak.gflops = loop_peak(fma_loop_avx2, 8, threads);
    peak.isa = "avx2";
  }
  // Some CPUs run AVX-512 FMAs at half width (one 512-bit port, or two
  // 256-bit halves): the faster loop is the peak.
  if (__builtin_cpu_supports("avx512f")) {
    const double wide = loop_peak(fma_loop_avx512, 16, threads);
    if (wide > peak.gflops) {
      peak.gflops = wide;
      peak.isa = "avx512";
    }
  }
  return peak;
}

}  // namespace kiln::tool
