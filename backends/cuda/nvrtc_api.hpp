// NVRTC's entry points, resolved with dlopen/dlsym once per process.
// Required symbols exist in every NVRTC since 11.x; optional ones (flow
// callback, PCH control) are nullptr where the loaded version lacks them.
#pragma once

#include <nvrtc.h>

#include <string>

#include "kiln/core/error.hpp"

namespace kiln::cuda {

struct NvrtcApi {
  // Required.
  decltype(&::nvrtcVersion) Version = nullptr;
  decltype(&::nvrtcGetErrorString) GetErrorString = nullptr;
  decltype(&::nvrtcCreateProgram) CreateProgram = nullptr;
  decltype(&::nvrtcDestroyProgram) DestroyProgram = nullptr;
  decltype(&::nvrtcCompileProgram) CompileProgram = nullptr;
  decltype(&::nvrtcGetProgramLogSize) GetProgramLogSize = nullptr;
  decltype(&::nvrtcGetProgramLog) GetProgramLog = nullptr;
  decltype(&::nvrtcGetPTXSize) GetPTXSize = nullptr;
  decltype(&::nvrtcGetPTX) GetPTX = nullptr;
  decltype(&::nvrtcGetCUBINSize) GetCUBINSize = nullptr;
  decltype(&::nvrtcGetCUBIN) GetCUBIN = nullptr;
  decltype(&::nvrtcAddNameExpression) AddNameExpression = nullptr;
  decltype(&::nvrtcGetLoweredName) GetLoweredName = nullptr;
  decltype(&::nvrtcGetNumSupportedArchs) GetNumSupportedArchs = nullptr;
  decltype(&::nvrtcGetSupportedArchs) GetSupportedArchs = nullptr;
  // Optional (12.x+): cancellation and precompiled headers.
  decltype(&::nvrtcSetFlowCallback) SetFlowCallback = nullptr;
  decltype(&::nvrtcGetPCHHeapSize) GetPCHHeapSize = nullptr;
  decltype(&::nvrtcSetPCHHeapSize) SetPCHHeapSize = nullptr;
  decltype(&::nvrtcGetPCHCreateStatus) GetPCHCreateStatus = nullptr;
  decltype(&::nvrtcGetPCHHeapSizeRequired) GetPCHHeapSizeRequired = nullptr;

  int major = 0;
  int minor = 0;
  std::string library_path;

  std::string version_string() const { return std::to_string(major) + "." + std::to_string(minor); }
};

// The process's NVRTC, loaded on first call (thread-safe). On failure the
// error names every path tried and how to point Kiln at a toolkit.
const Result<const NvrtcApi*>& nvrtc();

}  // namespace kiln::cuda
