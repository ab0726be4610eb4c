#include "kiln/tuner/device_identity.hpp"

namespace kiln {

DeviceIdentity device_identity(const Device& device) {
  const DeviceProperties& p = device.properties();
  return DeviceIdentity{p.arch, p.name, p.cc_major, p.cc_minor};
}

}  // namespace kiln
