// Capture and replay: record the choose_one() decisions of a computation of
// several ops, then run the computation once per combination of (runner,
// tactic) across its calls, so a test exercises every kernel of every op.
//
//   kiln::Capture capture;
//   { kiln::CaptureScope scope(capture); model.forward(x); }
//   for (std::uint64_t i = 0; i < capture.combinations(); ++i) {
//     kiln::ReplayScope replay(capture, capture.combination(i));
//     model.forward(x);                   // each choose_one is forced
//     replay.finish().value();            // every captured call was replayed
//   }
//
// A replayed call must be the captured one (same op, runners and profile,
// in the same order): anything else throws kiln::Error saying which call
// differs and how, since a replay that silently drifted would test nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kiln/framework/choose_one.hpp"

namespace kiln {

struct CapturedCall {
  std::string op;
  std::vector<RunnerId> runners;
  TacticKey key;  // op, runners and profile
  // Per runner, the tactics it listed for the call ({-1} when none).
  std::vector<std::vector<int>> tactics;
  std::size_t chosen_runner = 0;  // what choose_one decided while capturing
  int chosen_tactic = kFallbackTactic;

  std::size_t pairs() const;  // (runner, tactic) pairs of this call
  std::string describe() const;
};

// One (runner index, tactic) per captured call.
using Combination = std::vector<std::pair<std::size_t, int>>;

class Capture {
 public:
  const std::vector<CapturedCall>& calls() const { return calls_; }
  // Product over the calls of their pairs (saturates at UINT64_MAX).
  std::uint64_t combinations() const;
  // The i-th combination, the last call varying fastest.
  Combination combination(std::uint64_t index) const;
  // The decisions made while capturing.
  Combination captured() const;
  void add(CapturedCall call) { calls_.push_back(std::move(call)); }
  void clear() { calls_.clear(); }

 private:
  std::vector<CapturedCall> calls_;
};

// Records this thread's choose_one() calls into `capture` until it ends.
class CaptureScope {
 public:
  explicit CaptureScope(Capture& capture);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

  // Called by choose_one(); lists each runner's tactics for the call.
  void record(std::string_view op, std::span<TunableRunner* const> runners, const ArgList& inputs,
              const TacticKey& key, const Choice& choice);

 private:
  Capture& capture_;
  CaptureScope* outer_;
};

// Forces this thread's choose_one() calls to `combination` until it ends.
class ReplayScope {
 public:
  ReplayScope(const Capture& capture, Combination combination);
  ~ReplayScope();
  ReplayScope(const ReplayScope&) = delete;
  ReplayScope& operator=(const ReplayScope&) = delete;

  // Called by choose_one(): the forced choice for the next call. Throws
  // kiln::Error (kInvalidArgument) when the call differs from the captured
  // one at this position, or comes after the last.
  Choice next(std::string_view op, std::span<TunableRunner* const> runners, const TacticKey& key);
  // kInvalidArgument naming the first call not replayed, if any.
  Status finish() const;
  std::size_t replayed() const { return position_; }

 private:
  const Capture& capture_;
  Combination combination_;
  std::size_t position_ = 0;
  ReplayScope* outer_;
};

// Runs `computation` once per combination inside a ReplayScope. Returns the
// first failure (of the computation, or an unreplayed call), its message
// naming the combination.
Status replay_all(const Capture& capture, const std::function<Status()>& computation);

}  // namespace kiln
