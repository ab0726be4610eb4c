// recorded_device and recorded_record: see kiln/lab/recorded_space.hpp.
#include <algorithm>

#include "kiln/lab/recorded_space.hpp"

namespace kiln {

namespace {
// What read_recorded_space names a device when the file names none.
constexpr const char* kUnnamed = "an unnamed device";
}  // namespace

DeviceIdentity recorded_device(const RecordedSpace& recorded) {
  DeviceIdentity d;
  d.arch = "recorded";
  d.name = recorded.device == kUnnamed
               ? std::string(kUnnamed) + " (" + recorded.path.filename().string() + ")"
               : recorded.device;
  return d;
}

TuningIdentity recorded_identity(const RecordedSpace& recorded) {
  TuningIdentity id;
  id.device = recorded_device(recorded);
  return id;
}

TuningRecord recorded_record(const RecordedSpace& recorded) {
  TuningRecord r;
  r.problem = ProblemKey(recorded.kernel);
  r.device = recorded_device(recorded);
  r.reference = "none";
  const RecordedConfig* best = nullptr;
  for (const RecordedConfig& c : recorded.configs) {
    MeasuredConfig m(c.config, c.time_ms.value_or(0), c.time_ms.has_value(),
                     c.time_ms ? std::string() : c.failure);
    m.compile_ms = c.compile_ms;
    m.benchmark_ms = c.benchmark_ms;
    r.measured.push_back(std::move(m));
    if (c.time_ms && (!best || *c.time_ms < *best->time_ms)) best = &c;
  }
  if (best) {
    r.best = best->config;
    r.best_time_ms = *best->time_ms;
  }
  return r;
}

}  // namespace kiln
