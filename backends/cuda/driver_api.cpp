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

// Resolves entry points by name, collecting the names the library lacks
// (", "-separated) so that one error lists them all.
class Binder {
 public:
  explicit Binder(const DynamicLibrary& lib) : lib_(lib) {}
  template <class F>
  void operator()(F& field, const char* name) {
    field = reinterpret_cast<F>(lib_.symbol(name));
    if (!field) missing += std::string(missing.empty() ? "" : ", ") + name;
  }
  std::string missing;

 private:
  const DynamicLibrary& lib_;
};

void bind_device_entry_points(Binder& bind, DriverApi& api) {
  bind(api.Init, "cuInit");
  bind(api.DriverGetVersion, "cuDriverGetVersion");
  bind(api.GetErrorName, "cuGetErrorName");
  bind(api.GetErrorString, "cuGetErrorString");
  bind(api.DeviceGetCount, "cuDeviceGetCount");
  bind(api.DeviceGet, "cuDeviceGet");
  bind(api.DeviceGetName, "cuDeviceGetName");
  bind(api.DeviceGetAttribute, "cuDeviceGetAttribute");
  bind(api.DeviceTotalMem, "cuDeviceTotalMem_v2");
  // The versioned names are what cuda.h's macros map the plain names to
  // (legacy default stream semantics, not per-thread).
  bind(api.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(api.DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  bind(api.CtxSetCurrent, "cuCtxSetCurrent");
  bind(api.CtxSynchronize, "cuCtxSynchronize");
  bind(api.CtxGetCurrent, "cuCtxGetCurrent");
  bind(api.CtxGetDevice, "cuCtxGetDevice");
  bind(api.StreamGetCtx, "cuStreamGetCtx");
  bind(api.ModuleLoadData, "cuModuleLoadData");
  bind(api.ModuleUnload, "cuModuleUnload");
  bind(api.ModuleGetFunction, "cuModuleGetFunction");
  bind(api.FuncSetAttribute, "cuFuncSetAttribute");
  bind(api.FuncGetAttribute, "cuFuncGetAttribute");
  bind(api.LaunchKernelEx, "cuLaunchKernelEx");
  bind(api.LaunchKernel, "cuLaunchKernel");
}

void bind_memory_entry_points(Binder& bind, DriverApi& api, const DynamicLibrary& lib) {
  bind(api.MemAlloc, "cuMemAlloc_v2");
  bind(api.MemFree, "cuMemFree_v2");
  bind(api.MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  bind(api.MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  bind(api.MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  bind(api.MemsetD8Async, "cuMemsetD8Async");
  bind(api.StreamCreate, "cuStreamCreate");
  bind(api.StreamDestroy, "cuStreamDestroy_v2");
  bind(api.StreamSynchronize, "cuStreamSynchronize");
  bind(api.StreamBeginCapture, "cuStreamBeginCapture_v2");
  bind(api.StreamEndCapture, "cuStreamEndCapture");
  bind(api.EventCreate, "cuEventCreate");
  bind(api.EventDestroy, "cuEventDestroy_v2");
  bind(api.EventRecord, "cuEventRecord");
  bind(api.EventSynchronize, "cuEventSynchronize");
  // cuEventElapsedTime_v2 (12.8+) where the driver has it, else the original;
  // both take the same arguments.
  api.EventElapsedTime =
      reinterpret_cast<decltype(api.EventElapsedTime)>(lib.symbol("cuEventElapsedTime_v2"));
  if (!api.EventElapsedTime) bind(api.EventElapsedTime, "cuEventElapsedTime");
  bind(api.GraphInstantiate, "cuGraphInstantiateWithFlags");
  bind(api.GraphLaunch, "cuGraphLaunch");
  bind(api.GraphDestroy, "cuGraphDestroy");
  bind(api.GraphExecDestroy, "cuGraphExecDestroy");
}

// cuInit(0), with the toolkit's stub library told apart from a failing
// driver: the two have different fixes.
Status init_driver(DriverApi& api, const DynamicLibrary& lib) {
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
  return ok_status();
}

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
  Binder bind(lib);
  bind_device_entry_points(bind, api);
  bind_memory_entry_points(bind, api, lib);
  if (!bind.missing.empty()) {
    return make_error(ErrorCode::kUnavailable,
                      "the driver at " + lib.path() + " lacks entry points: " + bind.missing);
  }
  if (auto s = init_driver(api, lib); !s) return s.error();
  return &api;
}

}  // namespace

const Result<const DriverApi*>& driver() {
  static const Result<const DriverApi*> loaded = load_driver();
  return loaded;
}

}  // namespace kiln::cuda
