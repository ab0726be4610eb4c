// VirtualClock: a conservative discrete-event clock over real threads (see
// kiln/lab/virtual_clock.hpp for the rules).
#include "kiln/lab/virtual_clock.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"

namespace kiln {

// Named, not anonymous: VirtualClock::State (a class with linkage) holds
// them, which GCC refuses for anonymous types in a unity build.
namespace virtual_clock_detail {

// A busy thread: the station it took work at, whether it sleeps in
// spend(), and what wakes it (its own, so an event wakes one thread only).
struct Lane {
  explicit Lane(VirtualClock::Station s) : station(s) {}
  VirtualClock::Station station;
  bool asleep = false;
  std::condition_variable wake;
};

struct Sleeper {
  double end;
  std::string order;
  std::uint64_t seq;  // call order, the last tie-break
  std::thread::id who;
  bool operator<(const Sleeper& o) const {
    return std::tie(end, order, seq) < std::tie(o.end, o.order, o.seq);
  }
};

struct StationState {
  long workers = 0;  // threads that can take work here
  long busy = 0;     // of them, holding an item
  long waiting = 0;  // items offered and not yet taken (briefly -1 when a
                     // worker takes an item before its offer is counted)
};

}  // namespace virtual_clock_detail

using virtual_clock_detail::Lane;
using virtual_clock_detail::Sleeper;
using virtual_clock_detail::StationState;

struct VirtualClock::State {
  mutable std::mutex mutex;
  double now = 0;
  std::array<StationState, 2> stations;
  std::map<std::thread::id, Lane> lanes;  // busy threads only
  long awake = 0;                         // busy threads not asleep
  std::set<Sleeper> sleepers;
  std::uint64_t seq = 0;
  std::uint64_t version = 0;  // bumped on every change (stall detection)
  std::size_t stalls = 0;

  StationState& at(Station s) { return stations[static_cast<std::size_t>(s)]; }

  // Nothing more can happen at `now`: every busy thread sleeps, and no
  // station has work waiting for a free worker.
  bool settled() const {
    if (awake > 0) return false;
    return std::none_of(stations.begin(), stations.end(), [](const StationState& s) {
      return s.waiting > 0 && s.workers - s.busy > 0;
    });
  }

  // Wakes the earliest sleeper once settled (or when forced after a stall).
  void advance(bool force) {
    ++version;
    if (sleepers.empty() || (!force && !settled())) return;
    auto first = sleepers.begin();
    now = std::max(now, first->end);
    Lane& lane = lanes.at(first->who);
    lane.asleep = false;
    ++awake;
    sleepers.erase(first);
    lane.wake.notify_one();
  }

  void release(std::map<std::thread::id, Lane>::iterator lane) {
    StationState& s = at(lane->second.station);
    --s.busy;
    if (!lane->second.asleep) --awake;
    lanes.erase(lane);
  }
};

VirtualClock::VirtualClock() : state_(std::make_unique<State>()) {}
VirtualClock::~VirtualClock() = default;

double VirtualClock::now() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->now;
}

void VirtualClock::add_workers(Station station, int n) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->at(station).workers += n;
  state_->advance(false);
}

void VirtualClock::remove_workers(Station station, int n) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->at(station).workers -= n;
  state_->advance(false);
}

void VirtualClock::offer(Station station, std::size_t n) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->at(station).waiting += static_cast<long>(n);
  state_->advance(false);
}

void VirtualClock::take(Station station) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  State& s = *state_;
  // A thread that never said done() for its last item is done with it now.
  if (auto old = s.lanes.find(std::this_thread::get_id()); old != s.lanes.end()) s.release(old);
  s.lanes.try_emplace(std::this_thread::get_id(), station);
  --s.at(station).waiting;
  ++s.at(station).busy;
  ++s.awake;
  s.advance(false);
}

void VirtualClock::spend(double seconds, std::string_view order) {
  std::unique_lock<std::mutex> lock(state_->mutex);
  State& s = *state_;
  auto it = s.lanes.find(std::this_thread::get_id());
  if (it == s.lanes.end()) {
    throw Error(ErrorCode::kInternal,
                "VirtualClock::spend on a thread that took no work: call take() first");
  }
  Lane& lane = it->second;
  lane.asleep = true;
  --s.awake;
  s.sleepers.insert(
      Sleeper{s.now + std::max(0.0, seconds), std::string(order), s.seq++, it->first});
  s.advance(false);
  std::uint64_t seen = s.version;
  const auto patience = std::chrono::duration<double>(kStallSeconds);
  while (lane.asleep) {
    const bool quiet = lane.wake.wait_for(lock, patience) == std::cv_status::timeout;
    if (quiet && lane.asleep && s.version == seen) {
      // NOTES: nobody took the waiting work or settled for this long: a
      // hand-off the clock was not told of. Moving on keeps the run alive;
      // the count says the times may be off.
      ++s.stalls;
      KILN_LOG(kWarn) << "virtual clock: no progress for " << kStallSeconds
                      << " s of real time at simulated " << s.now << " s; moving on";
      s.advance(true);
    }
    seen = s.version;
  }
}

void VirtualClock::done() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  State& s = *state_;
  auto it = s.lanes.find(std::this_thread::get_id());
  if (it == s.lanes.end()) return;
  s.release(it);
  s.advance(false);
}

std::size_t VirtualClock::stalls() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->stalls;
}

}  // namespace kiln
