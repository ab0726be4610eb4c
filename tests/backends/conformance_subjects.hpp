// What the conformance suite runs over: every backend in the registration
// list, and those a test binds itself (the replay bound to a recording).
#pragma once

#include <string>
#include <vector>

#include "kiln/device/backend.hpp"

namespace kiln::test {

struct ConformanceSubject {
  std::string label;  // a test-name-safe name: "cpu", "replay_bound"
  const DeviceBackend* backend = nullptr;
  bool registered = true;  // in backends(), so find_backend() returns it
};

std::vector<ConformanceSubject> conformance_subjects();

}  // namespace kiln::test
