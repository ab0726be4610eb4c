#include "result_ledger.hpp"

#include <algorithm>

namespace kiln::internal {

Measurement not_run(const Config& config, Outcome outcome, ErrorInfo error) {
  Measurement m;
  m.config = config;
  m.outcome = outcome;
  m.error = std::move(error);
  return m;
}

Measurement not_run(const Config& config, Outcome outcome, std::string reason) {
  return not_run(config, outcome, make_error(outcome_error_code(outcome), std::move(reason)));
}

void ResultLedger::record(Measurement m, Outputs* outputs) {
  // The judge and the bar have locks of their own: they are called outside
  // this one, before the result counts (see the header).
  ProgressBar* progress = nullptr;
  std::function<void(const Measurement&)> hook;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return;
    progress = progress_;
    hook = on_record_;
  }
  if (judge_) judge_->observe(m, outputs);
  if (progress) {
    if (m.ok())
      progress->benchmarked();
    else
      progress->failed();
  }
  if (hook) hook(m);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return;
    if (m.ok() && m.stats.median > 0 && (best_seconds_ == 0 || m.stats.median < best_seconds_)) {
      best_seconds_ = m.stats.median;
    }
    results_.push_back(std::move(m));
    ++generation_;
  }
  changed_.notify_all();
}

double ResultLedger::best_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return best_seconds_;
}

void ResultLedger::set_prior_best(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (seconds > 0 && (best_seconds_ == 0 || seconds < best_seconds_)) best_seconds_ = seconds;
}

void ResultLedger::set_on_record(std::function<void(const Measurement&)> hook) {
  std::lock_guard<std::mutex> lock(mutex_);
  on_record_ = std::move(hook);
}

void ResultLedger::notify() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++generation_;
  }
  changed_.notify_all();
}

std::size_t ResultLedger::count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return results_.size();
}

void ResultLedger::wait(std::uint64_t* seen, std::chrono::steady_clock::time_point until) {
  // Bounded: a far time_point (no budget) must not overflow the wait.
  until = std::min(until, std::chrono::steady_clock::now() + std::chrono::hours(1));
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_until(lock, until, [&] { return generation_ != *seen; });
  *seen = generation_;
}

std::vector<Measurement> ResultLedger::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
  progress_ = nullptr;
  on_record_ = nullptr;
  return results_;
}

}  // namespace kiln::internal
