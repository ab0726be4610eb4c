// The time a tuning run's pipeline keeps (lib/tuner/pipeline.cpp), behind one interface it always
// has: the real (steady) clock by default, or a simulated one that replays
// recorded costs (the lab's VirtualClock). The pipeline tells its clock
// where work changes hands (units queued, artifacts pushed, workers started
// and gone, a worker done with its item) and times each benchmark on it;
// the real clock ignores the hand-offs, a simulated one moves only when no
// thread can act at the present moment, so that simulated time never
// passes while a config is on its way between threads.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln {

class PipelineClock {
 public:
  // Where work waits: compile units for the compile workers, compiled
  // configs for the benchmark workers.
  enum class Station { kCompile, kBenchmark };

  virtual ~PipelineClock() = default;

  // Seconds since the clock's own origin: a span is the difference of two
  // readings.
  virtual double now() const = 0;
  // False where the costs are replayed, not spent: a compile's real wall
  // time then says nothing of the run, and a config measured again reads
  // its recorded time again (finalists.hpp).
  virtual bool measures_real_time() const = 0;

  // Workers that can take work at `station` (threads started) and, later,
  // gone again.
  virtual void add_workers(Station station, int n) = 0;
  virtual void remove_workers(Station station, int n) = 0;
  // `n` items of work now wait at `station`.
  virtual void offer(Station station, std::size_t n) = 0;
  // The calling thread takes one waiting item at `station`.
  virtual void take(Station station) = 0;
  // The calling thread, busy, spends `seconds`; returns once they passed.
  // `order` ranks spans that end at the same moment.
  virtual void spend(double seconds, std::string_view order) = 0;
  // The calling thread is done with the item it took.
  virtual void done() = 0;
};

// The steady clock: hand-offs change nothing, spend() sleeps. Shared by
// every run that names no clock of its own; thread-safe.
PipelineClock& real_clock();

// Spans read on a clock, each [start, end): the time their union covers,
// and the time both unions cover (a run's compile and benchmark overlap).
double union_length(std::vector<std::pair<double, double>> intervals);
double intersection_length(std::vector<std::pair<double, double>> a,
                           std::vector<std::pair<double, double>> b);

}  // namespace kiln
