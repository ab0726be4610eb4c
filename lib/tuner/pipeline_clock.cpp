// The real clock of every tuning run (pipeline_clock.hpp).
#include "pipeline_clock.hpp"

#include <chrono>
#include <thread>

namespace kiln::internal {

namespace {

class RealClock final : public PipelineClock {
 public:
  // Readings are taken from a fixed origin, so that their doubles stay
  // small and a difference keeps the steady clock's nanoseconds.
  RealClock() : origin_(std::chrono::steady_clock::now()) {}

  double now() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
  }
  bool measures_real_time() const override { return true; }
  void add_workers(Station, int) override {}
  void remove_workers(Station, int) override {}
  void offer(Station, std::size_t) override {}
  void take(Station) override {}
  void spend(double seconds, std::string_view) override {
    if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
  void done() override {}

 private:
  const std::chrono::steady_clock::time_point origin_;
};

}  // namespace

PipelineClock& real_clock() {
  static RealClock clock;
  return clock;
}

}  // namespace kiln::internal
