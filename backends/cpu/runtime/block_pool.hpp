// BlockPool: the CPU device's workers. run() spreads the blocks of one
// launch over the workers and the calling thread with an atomic counter
// (blocks of a tiled kernel cost the same, so no work stealing is needed)
// and returns when every block is done.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kiln::cpu {

class BlockPool {
 public:
  // `threads` >= 1 runners in all: threads - 1 workers plus the caller;
  // fewer when threads cannot be created (threads() and start_error() say).
  explicit BlockPool(int threads);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  int threads() const { return threads_; }
  // Why threads() is less than asked for; empty when every thread started.
  const std::string& start_error() const { return start_error_; }

  // Calls body(block, runner) once for each block in [0, count); runner is
  // in [0, threads()) and no two concurrent calls share one. One run at a
  // time: concurrent callers take turns.
  void run(std::uint64_t count, const std::function<void(std::uint64_t, int)>& body);

 private:
  void worker_loop(int runner);
  void drain(int runner);

  int threads_ = 1;  // set once by the constructor
  std::string start_error_;
  std::mutex run_mutex_;  // one launch at a time

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::uint64_t generation_ = 0;
  // generation_ as polled without the lock by a worker about to sleep.
  std::atomic<std::uint64_t> published_{0};
  static constexpr std::chrono::microseconds kSpin{200};
  // Workers inside the current launch; open_ while its blocks are not all
  // taken (block_pool.cpp: why the caller waits only for joined workers).
  std::atomic<int> joined_{0};
  std::atomic<bool> open_{false};
  bool stop_ = false;
  const std::function<void(std::uint64_t, int)>* body_ = nullptr;
  std::uint64_t count_ = 0;
  std::atomic<std::uint64_t> next_{0};
  std::vector<std::thread> workers_;
};

}  // namespace kiln::cpu
