#include "probe.hpp"

#include "driver_api.hpp"
#include "nvrtc_api.hpp"

namespace kiln::cuda {

ComponentStatus probe_nvrtc() {
  ComponentStatus s;
  s.built = true;
  const auto& api = nvrtc();
  if (!api.ok()) {
    s.reason = api.error().describe();
    return s;
  }
  s.available = true;
  s.version = (*api)->version_string();
  s.location = (*api)->library_path;
  return s;
}

CudaDriverStatus probe_driver() {
  CudaDriverStatus out;
  out.driver.built = true;
  const auto& api = driver();
  if (!api.ok()) {
    out.driver.reason = api.error().describe();
    out.devices_reason = api.error().message;
    return out;
  }
  const DriverApi& d = **api;
  out.driver.available = true;
  out.driver.version = std::to_string(d.driver_version / 1000) + "." +
                       std::to_string((d.driver_version % 1000) / 10);
  out.driver.location = d.library_path;
  int count = 0;
  if (CUresult r = d.DeviceGetCount(&count); r != CUDA_SUCCESS) {
    out.devices_reason = "cuDeviceGetCount failed: " + d.describe(r);
    return out;
  }
  if (count == 0) out.devices_reason = "the driver reports no CUDA device";
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    if (d.DeviceGet(&dev, i) != CUDA_SUCCESS) continue;
    CudaDeviceInfo info;
    info.index = i;
    char name[256] = {};
    d.DeviceGetName(name, sizeof name, dev);
    info.name = name;
    d.DeviceGetAttribute(&info.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    d.DeviceGetAttribute(&info.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    d.DeviceGetAttribute(&info.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    std::size_t bytes = 0;
    d.DeviceTotalMem(&bytes, dev);
    info.total_memory = bytes;
    info.arch = "sm_" + std::to_string(info.cc_major * 10 + info.cc_minor);
    out.devices.push_back(std::move(info));
  }
  return out;
}

}  // namespace kiln::cuda
