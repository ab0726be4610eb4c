// The measurements of one tuning run as they come in, from benchmark
// workers (a finished config), the watchdog (a config abandoned at its
// deadline) and the compile callback (a config that did not compile, or was
// not run because the run stopped). Each config is recorded exactly once.
//
// It also wakes the watchdog: every record, and every notify() (a worker
// that could not start), ends its wait.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "kiln/tuner/measurement.hpp"
#include "measure.hpp"
#include "output_judge.hpp"
#include "tuner/progress.hpp"

namespace kiln::internal {

class ResultLedger {
 public:
  // `progress` is the caller's (borrowed): close() lets go of it, so a
  // worker left running after the run can never reach it.
  ResultLedger(std::shared_ptr<OutputJudge> judge, ProgressBar* progress)
      : judge_(std::move(judge)), progress_(progress) {}

  // A finished config, with the outputs of its checked run when they are
  // judged afterwards. The judge and the progress bar see it before it
  // counts, so a run that ends on its count has no call into them left.
  void record(Measurement m, Outputs* outputs = nullptr);
  // Wakes wait() without a result.
  void notify();
  // Called with every result, on the recording thread and outside the
  // ledger's lock, after the judge and the bar and before the result counts
  // (a run that ends on its count has no call into it left); set before any
  // record, dropped by close(). The pipeline's refill (pipeline.cpp).
  void set_on_record(std::function<void(const Measurement&)> hook);

  std::size_t count() const;
  // The fastest median of an ok measurement so far, counting `prior` (the
  // best of earlier rounds of the same search); 0 when there is none.
  // What early stop compares a config with.
  double best_seconds() const;
  void set_prior_best(double seconds);
  // Waits until something was recorded or notified since `*seen` (a
  // generation this updates), or until `until`.
  void wait(std::uint64_t* seen, std::chrono::steady_clock::time_point until);

  // The results so far; records after this are dropped, and the progress
  // bar is not touched again.
  std::vector<Measurement> close();

 private:
  const std::shared_ptr<OutputJudge> judge_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  ProgressBar* progress_;  // null once closed
  std::function<void(const Measurement&)> on_record_;
  bool closed_ = false;
  std::uint64_t generation_ = 0;
  std::vector<Measurement> results_;
  double best_seconds_ = 0;
};

Measurement not_run(const Config& config, Outcome outcome, std::string reason);
// The same with the whole error (a compile failure keeps its log).
Measurement not_run(const Config& config, Outcome outcome, ErrorInfo error);

}  // namespace kiln::internal
