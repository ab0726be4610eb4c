// Capture and replay of choose_one decisions.
#include "kiln/framework/capture.hpp"

#include <limits>

#include "kiln/core/error.hpp"
#include "thread_context.hpp"

namespace kiln {

std::size_t CapturedCall::pairs() const {
  std::size_t n = 0;
  for (const auto& t : tactics) n += t.size();
  return n;
}

std::string CapturedCall::describe() const {
  std::string out = "'" + op + "' with runners [";
  for (std::size_t i = 0; i < runners.size(); ++i) out += (i ? ", " : "") + runners[i].text();
  return out + "]";
}

std::uint64_t Capture::combinations() const {
  std::uint64_t n = 1;
  for (const auto& c : calls_) {
    std::uint64_t p = c.pairs();
    if (p != 0 && n > std::numeric_limits<std::uint64_t>::max() / p)
      return std::numeric_limits<std::uint64_t>::max();
    n *= p;
  }
  return n;
}

Combination Capture::combination(std::uint64_t index) const {
  if (index >= combinations()) {
    throw Error(ErrorCode::kInvalidArgument, "combination " + std::to_string(index) +
                                                 " of a capture that has " +
                                                 std::to_string(combinations()));
  }
  Combination out(calls_.size());
  for (std::size_t i = calls_.size(); i-- > 0;) {
    const CapturedCall& c = calls_[i];
    std::uint64_t k = index % c.pairs();
    index /= c.pairs();
    for (std::size_t r = 0; r < c.tactics.size(); ++r) {
      if (k < c.tactics[r].size()) {
        out[i] = {r, c.tactics[r][k]};
        break;
      }
      k -= c.tactics[r].size();
    }
  }
  return out;
}

Combination Capture::captured() const {
  Combination out;
  for (const auto& c : calls_) out.emplace_back(c.chosen_runner, c.chosen_tactic);
  return out;
}

CaptureScope::CaptureScope(Capture& capture)
    : capture_(capture), outer_(internal::thread_context().capture) {
  internal::thread_context().capture = this;
}

CaptureScope::~CaptureScope() {
  internal::thread_context().capture = outer_;
}

void CaptureScope::record(std::string_view op, std::span<TunableRunner* const> runners,
                          const ArgList& inputs, const TacticKey& key, const Choice& choice) {
  CapturedCall call;
  call.op = std::string(op);
  call.key = key;
  for (TunableRunner* r : runners) {
    call.runners.push_back(r->id());
    std::vector<int> t = r->tactics(inputs);
    if (t.empty()) t.push_back(kFallbackTactic);
    call.tactics.push_back(std::move(t));
  }
  call.chosen_runner = choice.runner_index;
  call.chosen_tactic = choice.tactic;
  capture_.add(std::move(call));
}

ReplayScope::ReplayScope(const Capture& capture, Combination combination)
    : capture_(capture),
      combination_(std::move(combination)),
      outer_(internal::thread_context().replay) {
  if (combination_.size() != capture_.calls().size()) {
    throw Error(ErrorCode::kInvalidArgument,
                "replay: the combination has " + std::to_string(combination_.size()) +
                    " choices for a capture of " + std::to_string(capture_.calls().size()) +
                    " calls; take it from Capture::combination()");
  }
  internal::thread_context().replay = this;
}

ReplayScope::~ReplayScope() {
  internal::thread_context().replay = outer_;
}

Choice ReplayScope::next(std::string_view op, std::span<TunableRunner* const> runners,
                         const TacticKey& key) {
  const auto& calls = capture_.calls();
  std::string now = "'" + std::string(op) + "' with runners [";
  for (std::size_t i = 0; i < runners.size(); ++i) now += (i ? ", " : "") + runners[i]->id().text();
  now += "]";
  if (position_ >= calls.size()) {
    throw Error(ErrorCode::kInvalidArgument, "replay mismatch: call #" + std::to_string(position_) +
                                                 " is " + now + ", but the capture has only " +
                                                 std::to_string(calls.size()) +
                                                 " calls; capture the computation again");
  }
  const CapturedCall& c = calls[position_];
  std::string why;
  if (c.op != op) {
    why = "another op";
  } else if (c.runners.size() != runners.size()) {
    why = "another number of runners";
  } else {
    for (std::size_t i = 0; i < runners.size() && why.empty(); ++i) {
      if (c.runners[i].text() != runners[i]->id().text())
        why = "another runner at " + std::to_string(i);
    }
    if (why.empty() && !(c.key == key)) why = "another shape profile";
  }
  if (!why.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "replay mismatch at call #" + std::to_string(position_) + ": captured " +
                    c.describe() + ", replayed " + now + " (" + why +
                    "); the computation must call its ops in the captured order and shapes");
  }
  auto [runner, tactic] = combination_[position_++];
  return Choice{runners[runner], runner, tactic, ChoiceSource::kReplay};
}

Status ReplayScope::finish() const {
  if (position_ == capture_.calls().size()) return ok_status();
  return make_error(ErrorCode::kInvalidArgument,
                    "replay: " + std::to_string(position_) + " of " +
                        std::to_string(capture_.calls().size()) +
                        " captured calls were replayed; the first missing is " +
                        capture_.calls()[position_].describe());
}

Status replay_all(const Capture& capture, const std::function<Status()>& computation) {
  std::uint64_t n = capture.combinations();
  for (std::uint64_t i = 0; i < n; ++i) {
    Combination combo = capture.combination(i);
    std::string text;
    for (const auto& [r, t] : combo)
      text += (text.empty() ? "" : ", ") + std::to_string(r) + ":" + std::to_string(t);
    auto fail = [&](ErrorInfo e) {
      e.message =
          "combination " + std::to_string(i) + " (runner:tactic " + text + "): " + e.message;
      return e;
    };
    ReplayScope replay(capture, combo);
    Status st = computation();
    if (!st.ok()) return fail(st.error());
    Status done = replay.finish();
    if (!done.ok()) return fail(done.error());
  }
  return ok_status();
}

}  // namespace kiln
