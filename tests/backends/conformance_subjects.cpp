// The suite's subjects. The registered ones come from backends(): adding a
// backend to the registration list adds it here. The replay is registered
// without a recording (so without devices); a bound one is made here over a
// two-config recording, so its devices are held to the contract too.
#include "conformance_subjects.hpp"

#include <memory>

#if KILN_TEST_HAVE_REPLAY
#include "kiln/backends/replay.hpp"
#endif

namespace kiln::test {

namespace {

#if KILN_TEST_HAVE_REPLAY
// The probe's config ran (0.25 ms); the broken one did not compile.
class ProbeRecording final : public replay::ReplaySource {
 public:
  const replay::ReplayRecord* find(const std::string& key) const override {
    if (key == Config{{"probe", std::int64_t{1}}}.key()) return &ran_;
    if (key == Config{{"probe", std::int64_t{2}}}.key()) return &broken_;
    return nullptr;
  }
  std::string device() const override { return "probe GPU"; }

 private:
  replay::ReplayRecord ran_{0.25, "", 0.0, 0.0};
  replay::ReplayRecord broken_{std::nullopt, "CompilationFailedConfig", 0.0, 0.0};
};

const DeviceBackend& bound_replay() {
  static const ProbeRecording recording;
  static const std::unique_ptr<DeviceBackend> backend = replay::make_replay_backend(
      std::make_shared<replay::ReplayBook>(recording, real_clock(), 0.0));
  return *backend;
}
#endif

}  // namespace

std::vector<ConformanceSubject> conformance_subjects() {
  std::vector<ConformanceSubject> out;
  for (const DeviceBackend* b : backends()) out.push_back({b->name(), b, true});
#if KILN_TEST_HAVE_REPLAY
  out.push_back({"replay_bound", &bound_replay(), false});
#endif
  return out;
}

}  // namespace kiln::test
