// The backend of a replayed tuning run (kiln/tuner/replay_tune.hpp): a
// compiler and a device that do what a recorded space says its GPU did.
// "Compiling" a unit costs the recorded compile times of its configs on the
// virtual clock and fails for a config the file says did not compile;
// "benchmarking" a config costs its recorded benchmark time and times it at
// its recorded run time, or fails its launch as the file says it failed.
// The real pipeline (pipeline.hpp) runs them: its compile workers, its
// benchmark worker and its grouping decide when each cost is paid.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "kiln/runtime/device.hpp"
#include "kiln/tuner/recorded_space.hpp"
#include "kiln/tuner/tuner.hpp"
#include "kiln/tuner/virtual_clock.hpp"
#include "tuner/trace.hpp"

namespace kiln::internal {

// What the replay's compilers and its device share: the file, the clock,
// the budget and the simulated spans.
class ReplayBook {
 public:
  // `budget_seconds`: simulated; 0 for none.
  ReplayBook(const RecordedSpace& recorded, VirtualClock& clock, double budget_seconds);

  const RecordedSpace& recorded() const { return recorded_; }
  VirtualClock& clock() { return clock_; }

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

  // A simulated span of work, for the run's statistics.
  void span(const std::string& track, const std::string& what, const char* category, double start,
            double end);
  // Union of compile spans, of benchmark spans, and their overlap (simulated s).
  double busy_seconds(const char* category) const { return spans_.busy_seconds(category); }
  double overlap_seconds() const { return spans_.overlap_seconds("compile", "benchmark"); }

 private:
  const RecordedSpace& recorded_;
  VirtualClock& clock_;
  double budget_;
  std::mutex mutex_;
  std::set<std::string> compiled_;  // configs charged, by Config::to_string
  TraceRecorder spans_;
  TraceRecorder::Clock::time_point zero_;
};

// The compiler side of the replay: one compiler per compile pool worker,
// each counted as a worker of the clock's compile station while it lives.
CompilerFactory replay_compilers(std::shared_ptr<ReplayBook> book);
// A compiler for the pieces of the Backend that want one shared compiler
// (keys, logs); it is never asked to compile by the pipeline.
std::shared_ptr<Compiler> replay_compiler(std::shared_ptr<ReplayBook> book);

// The device the benchmark worker measures on (the caller's device of the run).
std::unique_ptr<Device> make_replay_device(std::shared_ptr<ReplayBook> book);

}  // namespace kiln::internal
