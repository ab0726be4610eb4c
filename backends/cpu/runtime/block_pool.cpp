#include "block_pool.hpp"

#include <chrono>
#include <string>
#include <system_error>

namespace kiln::cpu {

BlockPool::BlockPool(int threads) {
  const int wanted = threads < 1 ? 1 : threads;
  for (int r = 1; r < wanted; ++r) {
    // A thread that cannot start (a process or memory limit) leaves fewer
    // runners, never an exception that would destroy the started ones
    // joinable (std::terminate): the caller always runs blocks itself.
    try {
      workers_.emplace_back([this, r] { worker_loop(r); });
    } catch (const std::system_error& e) {
      start_error_ = "the CPU device runs " + std::to_string(r) + " of " + std::to_string(wanted) +
                     " block threads: " + e.what();
      break;
    }
  }
  threads_ = static_cast<int>(workers_.size()) + 1;
}

BlockPool::~BlockPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void BlockPool::drain(int runner) {
  for (std::uint64_t b = next_.fetch_add(1); b < count_; b = next_.fetch_add(1))
    (*body_)(b, runner);
}

void BlockPool::worker_loop(int runner) {
  std::uint64_t seen = 0;
  for (;;) {
    // NOTES: launches often come back to back (a timing loop, a model's
    // layers), and waking a sleeping thread costs tens of microseconds, more
    // in a VM: a 1.4 ms GEMM ran 10-30% slower. So a worker polls for the
    // next launch for kSpin before it sleeps (OpenMP and OpenBLAS do the same,
    // for far longer).
    const auto until = std::chrono::steady_clock::now() + kSpin;
    while (published_.load(std::memory_order_acquire) == seen &&
           std::chrono::steady_clock::now() < until) {
      for (int i = 0; i < 16; ++i) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    // Join the launch only while it is open: one the caller has already
    // finished (this thread was preempted, its blocks all taken) is left
    // alone, and the caller does not wait for this thread to get a core.
    // NOTES: joined_ and open_ are a Dekker pair (both seq_cst): either the
    // caller's close sees this join and waits, or this join sees the close.
    joined_.fetch_add(1);
    if (open_.load()) drain(runner);
    if (joined_.fetch_sub(1) == 1) {
      std::lock_guard lock(mutex_);
      done_.notify_one();
    }
  }
}

void BlockPool::run(std::uint64_t count, const std::function<void(std::uint64_t, int)>& body) {
  std::lock_guard turn(run_mutex_);
  if (workers_.empty() || count == 1) {
    for (std::uint64_t b = 0; b < count; ++b) body(b, 0);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    body_ = &body;
    count_ = count;
    next_ = 0;
    open_.store(true);  // after body_ and count_: a worker that sees it sees them
    ++generation_;
    published_.store(generation_, std::memory_order_release);
  }
  wake_.notify_all();
  drain(0);
  // Every block is taken. Workers that joined may still be inside `body`
  // and keep a reference to it: wait for them (polling first, as they are
  // running, not asleep), but not for a worker that never joined.
  open_.store(false);
  const auto until = std::chrono::steady_clock::now() + kSpin;
  while (joined_.load() != 0 && std::chrono::steady_clock::now() < until) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return joined_.load() == 0; });
}

}  // namespace kiln::cpu
