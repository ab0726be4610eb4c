// The per-thread state the scopes set and choose_one() reads. One struct,
// one thread_local, so the hot path touches a single TLS slot.
#pragma once

#include <optional>
#include <set>
#include <string>

namespace kiln {
class TuningCache;
class CaptureScope;
class ReplayScope;
}  // namespace kiln

namespace kiln::internal {

struct ThreadContext {
  std::optional<bool> tuning;  // nullopt: outside every tuning scope (off)
  std::set<std::string, std::less<>> skip;
  // The innermost tuning scope's file on this thread: where this thread's
  // decisions go (never another thread's scope, which may be newer).
  TuningCache* cache = nullptr;
  CaptureScope* capture = nullptr;  // innermost active capture
  ReplayScope* replay = nullptr;    // innermost active replay
};

inline ThreadContext& thread_context() {
  thread_local ThreadContext context;
  return context;
}

}  // namespace kiln::internal
