// Opening a device of any backend this build has, by reference: what a
// benchmark worker process does with the device the tuner names, and what
// a tool does with a `--devices` list.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/device/device.hpp"

namespace kiln {

// "cuda:N" through the CUDA driver; "cpu" (its index only tells CPU devices
// apart) with `cpu_threads` block runners (0: one per core). Errors
// (values): the backend is not built here, no driver, no such device.
Result<std::unique_ptr<Device>> open_device(const DeviceRef& ref, int cpu_threads = 0);

// "cuda:0,cuda:1", "cpu", "cpu:0,cpu:1" (any backend's name, alone for
// index 0 or with ":N"), or bare indices "0,1" of `bare_backend`. Throws
// kiln::Error (kInvalidArgument) naming the bad item.
std::vector<DeviceRef> parse_device_list(std::string_view text,
                                         const std::string& bare_backend = "cuda");

}  // namespace kiln
