// The CUDA backend's devices. libcuda is loaded with dlopen at first use, so
// these return a reason, never crash, where there is no driver or no GPU:
//   ErrorCode::kUnavailable, "no NVIDIA driver: ..." / "... no CUDA device".
#pragma once

#include <memory>
#include <vector>

#include "kiln/device/device.hpp"

namespace kiln::cuda {

// How many CUDA devices the driver reports; an error when there is no driver.
Result<int> device_count();

// Device `index` (0-based), on its primary context. Errors (values): no
// driver, no device, index out of range. Each call returns a new Device
// object; the primary context is shared with every other user of the GPU.
Result<std::unique_ptr<Device>> open_device(int index);

// Every device in `indices` (all devices when empty), for one benchmark
// worker per device. Fails when any one cannot be opened.
Result<std::vector<std::unique_ptr<Device>>> open_devices(const std::vector<int>& indices = {});

}  // namespace kiln::cuda
