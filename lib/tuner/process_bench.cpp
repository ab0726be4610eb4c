#include "process_bench.hpp"

#include <chrono>
#include <map>
#include <mutex>

#include "kiln/log.hpp"
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

}  // namespace

ProcessBench::ProcessBench(std::string executable, std::shared_ptr<const Message> call,
                           DeviceRef device, int threads)
    : executable_(std::move(executable)), call_(std::move(call)) {
  pool_key_ = executable_ + "|" + device.to_string() + ":" + std::to_string(device.index) + "|" +
              std::to_string(threads);
}

ProcessBench::~ProcessBench() {
  // Idle, a worker must not hold the call's replicas (device memory on a
  // GPU): it is kept only once it has dropped them, else killed.
  if (!process_.running() || !process_.send({{"op", "release"}})) return;
  auto released = process_.receive(after(5));
  if (released.ok() && released->first.value("ok", false)) {
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
  // An idle worker first; one that died while idle fails the call and a
  // fresh one is started instead.
  for (int fresh = 0; fresh < 2; ++fresh) {
    std::optional<WorkerProcess> p;
    if (!fresh) p = IdleWorkers::instance().take(pool_key_);
    if (!p) {
      auto spawned = WorkerProcess::spawn({executable_});
      if (!spawned.ok()) return spawned.error();
      p = std::move(*spawned);
      ++starts_;
      if (!p->send({{"op", "hello"}})) continue;
      auto hello = p->receive(deadline);
      if (!hello.ok()) {
        if (hello.error().code == ErrorCode::kTimeout) p->kill();
        return make_error(ErrorCode::kUnavailable, "benchmark worker '" + executable_ +
                                                       "' did not start: " + hello.error().message);
      }
      if (hello->first.value("wire", 0) != kBenchWireVersion) {
        return make_error(ErrorCode::kUnavailable,
                          "'" + executable_ + "' is not a benchmark worker of this Kiln (wire " +
                              "version differs)",
                          {{"fix", "point KILN_WORKER at this build's kiln-bench-worker"}});
      }
    }
    if (!p->send(call_->json, call_->raw)) continue;
    auto reply = p->receive(deadline);
    if (!reply.ok()) {
      if (reply.error().code == ErrorCode::kTimeout) p->kill();
      if (fresh) return reply.error();
      continue;
    }
    if (!reply->first.value("ok", false)) {
      return make_error(ErrorCode::kUnavailable,
                        "benchmark worker could not set up the call: " +
                            reply->first.value("error", std::string("(no reason)")));
    }
    process_ = std::move(*p);
    return ok_status();
  }
  return make_error(ErrorCode::kUnavailable,
                    "benchmark worker '" + executable_ + "' closed its socket while starting");
}

Measurement ProcessBench::measure(const Artifact& artifact, const LaunchGeometry& geometry,
                                  double deadline_s, Outputs* captured) {
  if (Status st = start(start_timeout_s_); !st.ok()) {
    return failure(artifact, Outcome::kCrashed,
                   "no benchmark worker could be started: " + st.error().message);
  }
  const pid_t who = process_.pid();
  last_pid_ = who;
  const Message request = measure_request(artifact, geometry);
  const bool sent = process_.send(request.json, request.raw);
  auto reply = process_.receive(after(deadline_s));
  if (!reply.ok()) {
    if (reply.error().code == ErrorCode::kTimeout) {
      const std::string how = process_.kill();
      return failure(artifact, Outcome::kTimeout,
                     "benchmark passed its deadline of " + seconds_text(deadline_s) +
                         " s: its worker process " + std::to_string(who) + " was " +
                         (how.empty() ? "killed" : how) + " and is replaced");
    }
    auto exit = reply.error().details.find("exit");
    return failure(
        artifact, Outcome::kCrashed,
        "benchmark worker process " + std::to_string(who) + " " +
            (exit != reply.error().details.end() ? exit->second : reply.error().message) +
            (sent ? " while measuring this config" : " before this config reached it") +
            "; a fresh worker replaces it");
  }
  const auto& [json, raw] = *reply;
  if (!json.value("ok", false)) {
    return failure(artifact, Outcome::kLaunchFailed,
                   "benchmark worker: " + json.value("error", std::string("(no reason)")));
  }
  Measurement m;
  try {
    m = parse_measure_reply(json, raw, captured);
  } catch (const std::exception& e) {
    process_.kill();
    return failure(artifact, Outcome::kCrashed,
                   std::string("benchmark worker sent a malformed measurement: ") + e.what());
  }
  // Its device is unusable: the worker exits after this reply.
  if (m.outcome == Outcome::kCrashed) process_.kill();
  return m;
}

}  // namespace kiln::internal
