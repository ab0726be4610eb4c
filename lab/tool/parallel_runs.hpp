// Independent replays side by side, one per hardware thread, for
// `kiln-lab bench search`: each run (a seed of a strategy on a file) owns its
// state and writes only its own result slot, so running them together
// changes the command's wall time, never a number it reports.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::tool {

// Calls run(i) for every i in [0, n), on up to hardware_concurrency()
// threads (this one included). The first exception a run throws is
// rethrown here once every thread has stopped.
template <typename Run>
void run_parallel(std::size_t n, const Run& run) {
  const std::size_t threads =
      std::min<std::size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        run(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace kiln::tool
