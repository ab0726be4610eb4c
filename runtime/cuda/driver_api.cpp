#include "driver_api.hpp"

#include "dynlib.hpp"

namespace kiln::cuda {

std::string DriverApi::describe(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (GetErrorName) GetErrorName(result, &name);
  if (GetErrorString) GetErrorString(result, &text);
  std::string out = name ? name : "CUresult " + std::to_string(static_cast<int>(result));
  if (text) out += std::string(" (") + text + ")";
  return out;
}

namespace {

Result<const DriverApi*> load_driver() {
  static DynamicLibrary lib;
  static DriverApi api;
  std::string attempts;
  // Only the loader's path: the toolkit's lib64/stubs/libcuda.so links but
  // cannot run, so it is never a candidate.
  lib = DynamicLibrary::open_first({"libcuda.so.1", "libcuda.so"}, &attempts);
  if (!lib.loaded()) {
    return make_error(ErrorCode::kUnavailable,
                      "no NVIDIA driver: libcuda.so.1 is not installed on this machine",
                      {{"tried", attempts}});
  }
  std::string missing;
  auto bind = [&](auto& field, const char* name) {
    field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(lib.symbol(name));
    if (!field) missing += std::string(missing.empty() ? "" : ", ") + name;
  };
  bind(api.Init, "cuInit");
  bind(api.DriverGetVersion, "cuDriverGetVersion");
  bind(api.GetErrorName, "cuGetErrorName");
  bind(api.GetErrorString, "cuGetErrorString");
  bind(api.DeviceGetCount, "cuDeviceGetCount");
  bind(api.DeviceGet, "cuDeviceGet");
  bind(api.DeviceGetName, "cuDeviceGetName");
  bind(api.DeviceGetAttribute, "cuDeviceGetAttribute");
  bind(api.DeviceTotalMem, "cuDeviceTotalMem_v2");
  if (!missing.empty()) {
    return make_error(ErrorCode::kUnavailable,
                      "the driver at " + lib.path() + " lacks entry points: " + missing);
  }
  api.library_path = lib.path();
  api.DriverGetVersion(&api.driver_version);
  CUresult init = api.Init(0);
  if (init == CUDA_ERROR_STUB_LIBRARY) {
    return make_error(ErrorCode::kUnavailable,
                      "libcuda at " + lib.path() +
                          " is the CUDA toolkit's stub library: no NVIDIA driver is installed",
                      {{"fix", "remove lib64/stubs from LD_LIBRARY_PATH, or install the driver"}});
  }
  if (init != CUDA_SUCCESS) {
    return make_error(ErrorCode::kUnavailable, "cuInit failed: " + api.describe(init),
                      {{"library", lib.path()}});
  }
  return &api;
}

}  // namespace

const Result<const DriverApi*>& driver() {
  static const Result<const DriverApi*> loaded = load_driver();
  return loaded;
}

}  // namespace kiln::cuda
