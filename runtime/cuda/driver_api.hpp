// The CUDA driver's entry points, resolved with dlopen/dlsym once per
// process. "No driver" and "no device" are states reported with a reason,
// never a crash: CI machines have the toolkit and no GPU.
#pragma once

#include <cuda.h>

#include <string>

#include "kiln/error.hpp"

namespace kiln::cuda {

struct DriverApi {
  decltype(&::cuInit) Init = nullptr;
  decltype(&::cuDriverGetVersion) DriverGetVersion = nullptr;
  decltype(&::cuGetErrorName) GetErrorName = nullptr;
  decltype(&::cuGetErrorString) GetErrorString = nullptr;
  decltype(&::cuDeviceGetCount) DeviceGetCount = nullptr;
  decltype(&::cuDeviceGet) DeviceGet = nullptr;
  decltype(&::cuDeviceGetName) DeviceGetName = nullptr;
  decltype(&::cuDeviceGetAttribute) DeviceGetAttribute = nullptr;
  decltype(&::cuDeviceTotalMem_v2) DeviceTotalMem = nullptr;

  int driver_version = 0;  // e.g. 13000
  std::string library_path;

  // "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
  std::string describe(CUresult result) const;
};

// libcuda loaded and cuInit(0) succeeded; otherwise an error whose message
// says why (no driver installed, the toolkit's stub library, no device...).
const Result<const DriverApi*>& driver();

}  // namespace kiln::cuda
