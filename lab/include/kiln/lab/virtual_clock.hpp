// Simulated time for a run whose real threads hand work to each other: the
// tuning pipeline replaying recorded compile and benchmark costs
// (kiln/lab/replay_tune.hpp), so its compile workers, benchmark workers
// and grouping decide the simulated wall time, not a formula.
//
// Work waits at a station (compile units for the compile workers, compiled
// configs for the benchmark workers) until a worker takes it. A thread that
// took work is busy until done(); while busy it may spend() simulated time:
// it sleeps until the clock reaches the end of that span. Each thread is a
// lane with its own span; the clock's now() is one value for all of them.
//
// The clock moves only when nothing more can happen at the present moment:
// no busy thread is awake, and no station has work waiting while one of its
// workers is free. Then it wakes exactly one sleeper, the earliest to end
// (ties by the `order` key given to spend(), then by call order), and waits
// for that thread to settle again before waking the next. So the order of
// events, and every simulated time, follow from the costs and the
// pipeline's rules, not from how the OS schedules the threads: a run is
// deterministic for a given number of workers.
//
//   VirtualClock clock;
//   clock.add_workers(VirtualClock::Station::kCompile, 2);
//   clock.offer(VirtualClock::Station::kCompile, 3);   // three units queued
//   // on each worker thread, per unit:
//   clock.take(VirtualClock::Station::kCompile);
//   clock.spend(0.9, "unit 1");                        // returns at now() == 0.9
//   clock.done();
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "kiln/device/clock.hpp"

namespace kiln {

// The pipeline's clock interface (kiln/device/clock.hpp), simulated.
class VirtualClock final : public PipelineClock {
 public:
  VirtualClock();
  ~VirtualClock() override;
  VirtualClock(const VirtualClock&) = delete;
  VirtualClock& operator=(const VirtualClock&) = delete;

  // Simulated seconds since the clock was made.
  double now() const override;
  // Its costs are replayed, not spent.
  bool measures_real_time() const override { return false; }

  // Workers that can take work at `station` (threads started) and, later,
  // gone again. The clock waits for a free worker only while it has one.
  void add_workers(Station station, int n) override;
  void remove_workers(Station station, int n) override;

  // `n` items of work now wait at `station`.
  void offer(Station station, std::size_t n) override;

  // The calling thread takes one waiting item at `station`: it is busy, and
  // the clock waits for it, until it spends time or is done.
  void take(Station station) override;

  // The calling thread, busy, spends `seconds` of simulated time; returns
  // when the clock reaches the end of the span. `order` ranks spans that
  // end at the same moment (a config's text), so ties end the same way in
  // every run. Throws kiln::Error (kInternal) when the thread took no work.
  void spend(double seconds, std::string_view order = {}) override;

  // The calling thread is done with the item it took (nothing when it took
  // none, so a hand-off path that runs without a take is harmless).
  void done() override;

  // Times the clock moved on because nothing happened for kStallSeconds of
  // real time while it waited for a busy thread or a free worker: a
  // hand-off it was not told of. 0 in a correct run; the run still ends.
  std::size_t stalls() const;
  static constexpr double kStallSeconds = 20;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kiln
