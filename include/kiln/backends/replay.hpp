// The replay backend: a compiler and a device that do what a recording
// says its GPU did. "Compiling" a unit costs the recorded compile times of
// its configs on the run's clock and fails for a config the recording says
// did not compile; "benchmarking" a config costs its recorded benchmark time
// and times it at its recorded run time, or fails its launch as recorded.
// The real pipeline (lib/tuner/pipeline.hpp) runs them: its compile workers,
// its benchmark worker and its grouping decide when each cost is paid.
// What it replays comes through ReplaySource (the lab's recorded spaces,
// lab/) and its time through the pipeline's clock interface (the lab's
// VirtualClock): the backend itself needs neither.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kiln/compile/compile.hpp"
#include "kiln/compile/compile_pool.hpp"
#include "kiln/device/backend.hpp"
#include "kiln/device/clock.hpp"
#include "kiln/device/device.hpp"

namespace kiln::replay {

// What a recording says of one config.
struct ReplayRecord {
  // The time the replay measures, nullopt where the config failed.
  std::optional<double> time_ms;
  std::string failure;  // "RuntimeFailedConfig", "CompilationFailedConfig", ...
  double compile_ms = 0;
  double benchmark_ms = 0;
};

// The recording a replay reads.
class ReplaySource {
 public:
  virtual ~ReplaySource() = default;
  // The record of the config whose Config::key() is `key`, or nullptr when
  // the recording does not hold it.
  virtual const ReplayRecord* find(const std::string& key) const = 0;
  // The device it was recorded on, as its file names it.
  virtual std::string device() const = 0;
};

// What the replay's compilers and its device share: the recording, the
// clock, the budget and the simulated spans.
class ReplayBook {
 public:
  // `budget_seconds`: simulated; 0 for none. Both are borrowed.
  ReplayBook(const ReplaySource& recorded, PipelineClock& clock, double budget_seconds);

  const ReplaySource& recorded() const { return recorded_; }
  // The record of `config`, or nullptr.
  const ReplayRecord* find(const Config& config) const { return recorded_.find(config.key()); }
  PipelineClock& clock() { return clock_; }

  // Whether the budget is spent (no new compile or benchmark starts).
  bool budget_spent() const;
  // Simulated seconds left before the budget is spent (huge when none).
  double budget_left() const;
  // The error of a config the budget stopped (code kCancelled), and whether
  // a measurement's error is one (the pipeline may have rewrapped it: a
  // cancelled compile reads as a timeout, a cancelled load as a load failure).
  ErrorInfo budget_error(const Config& config) const;
  static bool stopped_by_budget(const ErrorInfo& error);

  // The recorded compile seconds of the unit's configs not compiled before
  // in this run; `fresh` says whether any was new (the first program of a
  // unit, not the failure isolation's retries of its parts).
  double charge_compile(const CompileUnit& unit, bool* fresh);

  // The config's outcome is known now (its benchmark ended, or its compile
  // failed): the moment a best-so-far curve against simulated time steps.
  // The first moment counts for a config that lands twice.
  void landed(const Config& config);
  std::optional<double> landed_at(const Config& config) const;

  // A simulated span of work, for the run's statistics.
  void span(const char* category, double start, double end);
  // Union of compile spans, of benchmark spans, and their overlap (simulated s).
  double busy_seconds(const char* category) const;
  double overlap_seconds() const;

 private:
  const ReplaySource& recorded_;
  PipelineClock& clock_;
  double budget_;
  mutable std::mutex mutex_;
  std::set<std::string> compiled_;        // configs charged, by Config::key()
  std::map<std::string, double> landed_;  // by Config::key()
  // NOTES: the spans are kept as the clock's doubles, not as a
  // TraceRecorder's time points: those round each span through a real
  // clock reading, so the same replay's totals differed in their last bits
  // from run to run.
  std::map<std::string, std::vector<std::pair<double, double>>> spans_;  // by category
};

// The compiler side of the replay: one compiler per compile pool worker,
// each counted as a worker of the clock's compile station while it lives.
CompilerFactory replay_compilers(std::shared_ptr<ReplayBook> book);
// A compiler for the pieces of the Backend that want one shared compiler
// (keys, logs); it is never asked to compile by the pipeline.
std::unique_ptr<Compiler> replay_compiler(std::shared_ptr<ReplayBook> book);

// The device the benchmark worker measures on (the caller's device of the run).
std::unique_ptr<Device> make_replay_device(std::shared_ptr<ReplayBook> book);

// The backend registered as "replay" (backends/backends.cpp): no recording,
// so no device (device_count() says how to get one).
const DeviceBackend& backend();
// The replay backend bound to `book`: one device (index 0) replaying it and
// compilers charging it, as the registered one would with a recording.
std::unique_ptr<DeviceBackend> make_replay_backend(std::shared_ptr<ReplayBook> book);

}  // namespace kiln::replay
