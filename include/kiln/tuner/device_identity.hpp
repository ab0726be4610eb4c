// The identity tuning records carry for a device, as the tuner computes it:
// what a framework tags its own records with too.
#pragma once

#include "kiln/cache/tuning_record.hpp"
#include "kiln/device/device.hpp"

namespace kiln {

DeviceIdentity device_identity(const Device& device);

}  // namespace kiln
