// The CUDA driver's entry points, resolved with dlopen/dlsym once per
// process. "No driver" and "no device" are states reported with a reason,
// never a crash: CI machines have the toolkit and no GPU.
#pragma once

#include <cuda.h>

#include <string>

#include "kiln/core/error.hpp"

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
  // Contexts (the device's primary context, see CudaDevice).
  decltype(&::cuDevicePrimaryCtxRetain) DevicePrimaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) DevicePrimaryCtxRelease = nullptr;
  decltype(&::cuCtxSetCurrent) CtxSetCurrent = nullptr;
  decltype(&::cuCtxSynchronize) CtxSynchronize = nullptr;
  // A caller's context and stream (CudaDevice::wrap_stream).
  decltype(&::cuCtxGetCurrent) CtxGetCurrent = nullptr;
  decltype(&::cuCtxGetDevice) CtxGetDevice = nullptr;
  decltype(&::cuStreamGetCtx) StreamGetCtx = nullptr;
  // Modules and launches.
  decltype(&::cuModuleLoadData) ModuleLoadData = nullptr;
  decltype(&::cuModuleUnload) ModuleUnload = nullptr;
  decltype(&::cuModuleGetFunction) ModuleGetFunction = nullptr;
  decltype(&::cuFuncSetAttribute) FuncSetAttribute = nullptr;
  decltype(&::cuFuncGetAttribute) FuncGetAttribute = nullptr;
  decltype(&::cuLaunchKernelEx) LaunchKernelEx = nullptr;
  decltype(&::cuLaunchKernel) LaunchKernel = nullptr;
  // Memory.
  decltype(&::cuMemAlloc) MemAlloc = nullptr;
  decltype(&::cuMemFree) MemFree = nullptr;
  decltype(&::cuMemcpyHtoDAsync) MemcpyHtoDAsync = nullptr;
  decltype(&::cuMemcpyDtoHAsync) MemcpyDtoHAsync = nullptr;
  decltype(&::cuMemcpyDtoDAsync) MemcpyDtoDAsync = nullptr;
  decltype(&::cuMemsetD8Async) MemsetD8Async = nullptr;
  // Streams, events, graphs.
  decltype(&::cuStreamCreate) StreamCreate = nullptr;
  decltype(&::cuStreamDestroy) StreamDestroy = nullptr;
  decltype(&::cuStreamSynchronize) StreamSynchronize = nullptr;
  decltype(&::cuStreamBeginCapture) StreamBeginCapture = nullptr;
  decltype(&::cuStreamEndCapture) StreamEndCapture = nullptr;
  decltype(&::cuEventCreate) EventCreate = nullptr;
  decltype(&::cuEventDestroy) EventDestroy = nullptr;
  decltype(&::cuEventRecord) EventRecord = nullptr;
  decltype(&::cuEventSynchronize) EventSynchronize = nullptr;
  decltype(&::cuEventElapsedTime) EventElapsedTime = nullptr;
  decltype(&::cuGraphInstantiateWithFlags) GraphInstantiate = nullptr;
  decltype(&::cuGraphLaunch) GraphLaunch = nullptr;
  decltype(&::cuGraphDestroy) GraphDestroy = nullptr;
  decltype(&::cuGraphExecDestroy) GraphExecDestroy = nullptr;

  int driver_version = 0;  // e.g. 13000
  std::string library_path;

  // "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
  std::string describe(CUresult result) const;
};

// libcuda loaded and cuInit(0) succeeded; otherwise an error whose message
// says why (no driver installed, the toolkit's stub library, no device...).
const Result<const DriverApi*>& driver();

}  // namespace kiln::cuda
