// What `kiln bench gemm` and its BLAS worker processes share, so that both
// sides of a ratio are timed and checked the same way: a timing round, and
// a check of C against a double-precision reference.
#pragma once

#include <chrono>
#include <thread>
#include <vector>

#include "sample_stats.hpp"

namespace kiln::tool {

// The median seconds of one run of `body` over a round of >= 0.2 s (the
// median, as the tuner reports: a run the machine's other work preempted
// does not count against either side).
// NOTES: OpenBLAS's threads spin for a while after a call (about 0.1 s,
// OPENBLAS_THREAD_TIMEOUT) and would take a core from whatever runs next,
// in this process or another; so each round starts after a pause that lets
// every side's threads go idle, with one untimed call that wakes its own.
template <class Body>
double time_round(Body&& body) {
  using Clock = std::chrono::steady_clock;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  body();
  std::vector<double> runs;
  const auto start = Clock::now();
  do {
    const auto t0 = Clock::now();
    body();
    runs.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  } while (std::chrono::duration<double>(Clock::now() - start).count() < 0.2);
  return median(std::move(runs));
}

struct GemmCheck {
  double max_abs_err = 0;  // the largest |C - reference| of the elements checked
  double max_rel_err = 0;  // the same over the sum of |a_ik b_kj| of each element
  bool correct = false;    // max_rel_err within fp32 rounding of K products
};

// Checks row-major C = A B (m x k times k x n) against a double-precision
// reference on up to 64 rows by 64 columns, evenly spread and including the
// first and last of each (edge tiles are where a kernel goes wrong).
GemmCheck check_gemm(const float* a, const float* b, const float* c, int m, int n, int k);

}  // namespace kiln::tool
