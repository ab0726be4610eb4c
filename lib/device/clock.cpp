// The real clock of every tuning run, and spans on a clock
// (kiln/device/clock.hpp).
#include "kiln/device/clock.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace kiln {

namespace {
// Sorted, disjoint intervals covering the same points as `in`.
std::vector<std::pair<double, double>> merged(std::vector<std::pair<double, double>> in) {
  std::sort(in.begin(), in.end());
  std::vector<std::pair<double, double>> out;
  for (const auto& [s, e] : in) {
    if (e <= s) continue;
    if (!out.empty() && s <= out.back().second)
      out.back().second = std::max(out.back().second, e);
    else
      out.emplace_back(s, e);
  }
  return out;
}

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

double union_length(std::vector<std::pair<double, double>> intervals) {
  double total = 0;
  for (const auto& [s, e] : merged(std::move(intervals))) total += e - s;
  return total;
}

double intersection_length(std::vector<std::pair<double, double>> a,
                           std::vector<std::pair<double, double>> b) {
  auto ma = merged(std::move(a)), mb = merged(std::move(b));
  double total = 0;
  std::size_t i = 0, j = 0;
  while (i < ma.size() && j < mb.size()) {
    double lo = std::max(ma[i].first, mb[j].first);
    double hi = std::min(ma[i].second, mb[j].second);
    if (hi > lo) total += hi - lo;
    (ma[i].second < mb[j].second) ? ++i : ++j;
  }
  return total;
}

}  // namespace kiln
