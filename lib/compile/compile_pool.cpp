// The compile pool. One mutex guards every shared field; workers never hold
// it while compiling or while running the completion callback, so a callback
// may submit more work.
#include "kiln/compile/compile_pool.hpp"

#include <algorithm>
#include <chrono>
#include <system_error>

#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"

namespace kiln {

int resolve_workers(int requested, const Options& options) {
  if (requested > kMaxCompileWorkers) {
    KILN_LOG(kWarn) << requested << " compile workers asked for; using " << kMaxCompileWorkers
                    << ", the most a pool runs";
    return kMaxCompileWorkers;
  }
  if (requested > 0) return requested;
  if (options.compile_threads > 0) return std::min(options.compile_threads, kMaxCompileWorkers);
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 0 ? static_cast<int>(cores) : 1;
}

namespace {

// Every entry of `unit` failed with `code` before it was compiled.
UnitResult unrun_result(const CompileUnit& unit, ErrorCode code, const std::string& why) {
  UnitResult r;
  r.unit = unit;
  for (const auto& s : unit.specializations) {
    r.entries.push_back(make_error(code, "compile of " + unit.describe() + " " + why,
                                   {{"kernel", s.kernel},
                                    {"config", s.config.to_string()},
                                    {"entry", s.entry},
                                    {"arch", unit.arch}}));
  }
  return r;
}

}  // namespace

CompilePool::CompilePool(CompilerFactory factory, PoolOptions options, Callback on_complete)
    : context_(std::move(options.context)), callback_(std::move(on_complete)) {
  if (!factory) {
    throw Error(ErrorCode::kInvalidArgument, "CompilePool needs a compiler factory");
  }
  const int n = resolve_workers(options.workers);
  std::vector<std::shared_ptr<Compiler>> compilers;
  for (int i = 0; i < n; ++i) {
    auto c = factory(i);
    if (!c) {
      throw Error(
          ErrorCode::kInvalidArgument,
          "CompilePool: the compiler factory returned null for worker " + std::to_string(i));
    }
    compilers.push_back(std::move(c));
  }
  threads_.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    // NOTES: a thread that cannot start (EAGAIN: a process or memory limit)
    // must not escape as an exception here: the started threads would be
    // destroyed joinable, which is std::terminate. The pool runs with those
    // it has; with none, every unit fails at once with the reason.
    try {
      threads_.emplace_back(&CompilePool::work, this, i, compilers[static_cast<std::size_t>(i)]);
    } catch (const std::system_error& e) {
      start_error_ = "only " + std::to_string(i) + " of " + std::to_string(n) +
                     " compile worker threads could start (" + e.what() +
                     "): lower --threads or KILN_COMPILE_THREADS, or raise the process limit";
      KILN_LOG(kWarn) << start_error_;
      break;
    }
  }
}

CompilePool::CompilePool(std::shared_ptr<Compiler> compiler, PoolOptions options,
                         Callback on_complete)
    : CompilePool(
          [compiler](int) {
            if (!compiler) throw Error(ErrorCode::kInvalidArgument, "CompilePool: null compiler");
            return compiler;
          },
          std::move(options), std::move(on_complete)) {}

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [ticket, token] : running_) token.cancel();
    for (auto& job : jobs_) job.cancel.cancel();
  }
  work_ready_.notify_all();
  for (auto& t : threads_) t.join();
}

std::uint64_t CompilePool::submit(CompileUnit unit, CancelToken cancel) {
  std::uint64_t ticket = 0;
  const bool workerless = threads_.empty();
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      throw Error(ErrorCode::kInvalidArgument, "CompilePool::submit after the pool began to stop");
    }
    ticket = next_ticket_++;
    ++pending_;
    ++stats_.submitted;
    // A child token: cancel_all() cancels it without touching the caller's.
    if (!workerless) jobs_.push_back(Job{ticket, std::move(unit), CancelToken::child_of(cancel)});
  }
  if (workerless) {
    CompletedUnit done;
    done.ticket = ticket;
    done.result = unrun_result(unit, ErrorCode::kUnavailable, "did not run: " + start_error_);
    complete(std::move(done), ticket, 0);
    return ticket;
  }
  work_ready_.notify_one();
  return ticket;
}

std::vector<std::uint64_t> CompilePool::submit_all(std::vector<CompileUnit> units) {
  std::vector<std::uint64_t> tickets;
  for (auto& u : units) tickets.push_back(submit(std::move(u)));
  return tickets;
}

void CompilePool::work(int index, std::shared_ptr<Compiler> compiler) {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping and drained
      job = std::move(jobs_.front());
      jobs_.pop_front();
      running_.emplace(job.ticket, job.cancel);
    }
    const auto start = std::chrono::steady_clock::now();
    CompletedUnit done;
    done.ticket = job.ticket;
    done.worker = index;
    if (job.cancel.cancelled()) {
      done.result = unrun_result(job.unit, ErrorCode::kCancelled, "was cancelled before it ran");
    } else {
      try {
        done.result = compile_isolated(*compiler, job.unit, job.cancel, context_);
      } catch (const std::exception& e) {
        // A compiler that throws breaks its contract; keep the pool alive
        // and give every entry the evidence.
        UnitResult r;
        r.unit = job.unit;
        for (std::size_t i = 0; i < job.unit.specializations.size(); ++i) {
          r.entries.push_back(
              make_error(ErrorCode::kInternal, std::string("compiler threw: ") + e.what(),
                         {{"config", job.unit.specializations[i].config.to_string()}}));
        }
        done.result = std::move(r);
      }
    }
    const double busy =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    complete(std::move(done), job.ticket, busy);
  }
}

void CompilePool::complete(CompletedUnit done, std::uint64_t ticket, double busy) {
  const std::size_t ok = done.result.ok_count();
  {
    std::lock_guard lock(mutex_);
    running_.erase(ticket);
    ++stats_.completed;
    stats_.programs += done.result.programs;
    stats_.artifacts += ok;
    stats_.failed += done.result.entries.size() - ok;
    stats_.busy_seconds += busy;
    if (!callback_) done_.push_back(std::move(done));
  }
  if (callback_) {
    try {
      callback_(std::move(done));
    } catch (const std::exception& e) {
      KILN_LOG(kError) << "compile pool callback threw: " << e.what();
    }
  }
  {
    std::lock_guard lock(mutex_);
    --pending_;
  }
  done_ready_.notify_all();
}

std::optional<CompletedUnit> CompilePool::next() {
  std::unique_lock lock(mutex_);
  done_ready_.wait(lock, [&] { return !done_.empty() || pending_ == 0 || callback_ != nullptr; });
  if (done_.empty()) return std::nullopt;
  CompletedUnit out = std::move(done_.front());
  done_.pop_front();
  return out;
}

void CompilePool::cancel_all() {
  std::lock_guard lock(mutex_);
  for (auto& [ticket, token] : running_) token.cancel();
  for (auto& job : jobs_) job.cancel.cancel();
}

void CompilePool::wait_idle() {
  std::unique_lock lock(mutex_);
  done_ready_.wait(lock, [&] { return pending_ == 0; });
}

PoolStats CompilePool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace kiln
