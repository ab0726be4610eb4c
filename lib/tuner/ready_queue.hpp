// The ready queue of a tuning run: artifacts that landed (from the artifact
// cache or the compile pool), waiting for a free benchmark worker.
//
// Its lock guards the queue alone and is held for a push or a pop, never
// across disk I/O or a measurement: artifacts are stored before they are
// pushed (pipeline.cpp), so a worker that finishes a config never waits on
// a store. Closing it is how a run stops: every artifact is then either
// popped by a worker, returned by close() or refused by push(), so each
// config ends as exactly one measurement.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kiln/compile/compile_engine.hpp"

namespace kiln::internal {

class ReadyQueue {
 public:
  // Queues `artifact` for a worker; false (and `artifact` untouched) once
  // the queue is closed: the caller records the config as not run, with
  // close_reason().
  bool push(Artifact& artifact);

  // The oldest artifact; waits while the queue is empty and open (a unit
  // still compiling may refill it). nullopt once it is closed: the worker
  // leaves.
  std::optional<Artifact> pop();

  // No more pushes or pops. Returns what was waiting, for the caller to
  // record as not run; `reason` says why (the first close's reason stays).
  std::vector<Artifact> close(const std::string& reason);

  bool closed() const;
  std::string close_reason() const;
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Artifact> items_;
  bool closed_ = false;
  std::string reason_;
};

}  // namespace kiln::internal
