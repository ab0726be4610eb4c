#include "process_bench.hpp"

#include <chrono>
#include <map>
#include <mutex>

#include "kiln/core/log.hpp"
#include "measure.hpp"

namespace kiln::internal {

namespace {

using Clock = std::chrono::steady_clock;

// Idle healthy workers by key. Bounded: a program tuning on many devices
// keeps at most a few processes per device waiting.
class IdleWorkers {
 public:
  static IdleWorkers& instance() {
    static IdleWorkers* idle = new IdleWorkers;  // never destroyed: children see EOF at exit
    return *idle;
  }
  std::optional<WorkerProcess> take(const std::string& key) {
    std::lock_guard lock(mutex_);
    // The most recently used first: the one whose caches are warm.
    auto [first, last] = idle_.equal_range(key);
    if (first == last) return std::nullopt;
    auto it = std::prev(last);
    WorkerProcess p = std::move(it->second);
    idle_.erase(it);
    return p;
  }
  void put(const std::string& key, WorkerProcess p) {
    std::lock_guard lock(mutex_);
    if (idle_.count(key) >= kPerKey) return;  // `p` is killed on leaving
    idle_.emplace(key, std::move(p));
  }
  void clear() {
    std::lock_guard lock(mutex_);
    idle_.clear();
  }
  // Whether any worker idles under a key that starts with `prefix`.
  bool holds(const std::string& prefix) {
    std::lock_guard lock(mutex_);
    auto it = idle_.lower_bound(prefix);
    return it != idle_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
  }

 private:
  static constexpr std::size_t kPerKey = 4;
  std::mutex mutex_;
  std::multimap<std::string, WorkerProcess> idle_;
};

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string seconds_text(double s) {
  std::string t = std::to_string(s);
  while (t.size() > 1 && t.back() == '0') t.pop_back();
  if (!t.empty() && t.back() == '.') t.pop_back();
  return t;
}

// Idle workers that answered their hello and have no call yet: any run of
// that executable can take one.
std::string greeted_key(const std::string& executable) {
  return executable + "|greeted";
}

// Starts `executable` and checks that it answers the hello of a benchmark
// worker of this wire before `deadline`; in words otherwise.
Result<WorkerProcess> start_greeted(const std::string& executable, Clock::time_point deadline) {
  auto started = WorkerProcess::start({executable}, deadline, MeasureRequest::kOp);
  if (!started.ok()) return started.error();
  return std::move(started->process);
}

}  // namespace

Status greet_bench_worker(const std::string& executable, double timeout_s) {
  if (IdleWorkers::instance().holds(executable + "|")) return ok_status();
  auto p = start_greeted(executable, after(timeout_s));
  if (!p.ok()) return p.error();
  IdleWorkers::instance().put(greeted_key(executable), std::move(*p));
  return ok_status();
}

ProcessBench::ProcessBench(std::string executable, std::shared_ptr<const Message> call,
                           DeviceRef device, int threads)
    : executable_(std::move(executable)), call_(std::move(call)) {
  pool_key_ = executable_ + "|" + device.to_string() + ":" + std::to_string(device.index) + "|" +
              std::to_string(threads);
}

ProcessBench::~ProcessBench() {
  // Idle, a worker must not hold the call's replicas (device memory on a
  // GPU): it is kept only once it has dropped them, else killed.
  if (!process_.running()) return;
  worker::Reply released = process_.call(ReleaseRequest{}, after(5));
  if (released.answered && released.answer.ok()) {
    IdleWorkers::instance().put(pool_key_, std::move(process_));
  }
}

void clear_idle_bench_workers() {
  IdleWorkers::instance().clear();
}

Status ProcessBench::start(double timeout_s) {
  start_timeout_s_ = timeout_s;
  if (process_.running()) return ok_status();
  const auto deadline = after(timeout_s);
  // An idle worker first (one with this call's device open, else one
  // greeted before the run); one that died while idle fails the call and a
  // fresh one is started instead.
  for (int fresh = 0; fresh < 2; ++fresh) {
    std::optional<WorkerProcess> p;
    if (!fresh) p = IdleWorkers::instance().take(pool_key_);
    if (!fresh && !p) p = IdleWorkers::instance().take(greeted_key(executable_));
    if (!p) {
      auto started = start_greeted(executable_, deadline);
      if (!started.ok()) {
        return make_error(ErrorCode::kUnavailable,
                          "benchmark worker did not start: " + started.error().message);
      }
      p = std::move(*started);
      ++starts_;
    }
    worker::Reply reply = p->call(BenchCall::kOp, *call_, deadline);
    if (!reply.answered) {
      if (reply.answer.error().code == ErrorCode::kTimeout) p->kill();
      if (fresh) return reply.answer.error();
      continue;
    }
    if (!reply.answer.ok()) {
      ErrorInfo e = reply.answer.error();
      e.message = "benchmark worker could not set up the call: " + e.message;
      return e;
    }
    process_ = std::move(*p);
    return ok_status();
  }
  return make_error(ErrorCode::kUnavailable,
                    "benchmark worker '" + executable_ + "' closed its socket while starting");
}

Measurement ProcessBench::measure(const Artifact& artifact, const LaunchGeometry& geometry,
                                  double deadline_s, Outputs* captured, const StopBars& stop) {
  if (Status st = start(start_timeout_s_); !st.ok()) {
    return failure(artifact, Outcome::kCrashed,
                   "no benchmark worker could be started: " + st.error().message);
  }
  const pid_t who = process_.pid();
  last_pid_ = who;
  worker::Reply reply = process_.call(MeasureRequest{artifact, geometry, stop}, after(deadline_s));
  if (!reply.answered) {
    const ErrorInfo& why = reply.answer.error();
    if (why.code == ErrorCode::kTimeout) {
      const std::string how = process_.kill();
      return failure(artifact, Outcome::kTimeout,
                     "benchmark passed its deadline of " + seconds_text(deadline_s) +
                         " s: its worker process " + std::to_string(who) + " was " +
                         (how.empty() ? "killed" : how) + " and is replaced");
    }
    const auto& details = why.details;
    auto exit = details.find("exit");
    auto sent = details.find("sent");
    const bool reached = sent == details.end() || sent->second != "no";
    process_.kill();
    return failure(
        artifact, Outcome::kCrashed,
        "benchmark worker process " + std::to_string(who) + " " +
            (exit != details.end() ? exit->second : why.message) +
            (reached ? " while measuring this config" : " before this config reached it") +
            "; a fresh worker replaces it");
  }
  if (!reply.answer.ok()) {
    return failure(artifact, Outcome::kLaunchFailed,
                   "benchmark worker: " + reply.answer.error().describe());
  }
  auto parsed = MeasureReply::decode(std::move(*reply.answer));
  if (!parsed.ok()) {
    process_.kill();
    return failure(artifact, Outcome::kCrashed,
                   "benchmark worker sent a malformed measurement: " + parsed.error().message);
  }
  Measurement m = std::move(parsed->measurement);
  if (captured && !parsed->outputs.empty()) *captured = std::move(parsed->outputs);
  // Its device is unusable: the worker exits after this reply.
  if (m.outcome == Outcome::kCrashed) process_.kill();
  return m;
}

}  // namespace kiln::internal
