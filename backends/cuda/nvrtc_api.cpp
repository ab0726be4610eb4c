#include "nvrtc_api.hpp"

#include "dynlib.hpp"
#include "kiln/core/options.hpp"

namespace kiln::cuda {

namespace {

Result<const NvrtcApi*> load_nvrtc() {
  static DynamicLibrary lib;  // kept for the life of the process
  static NvrtcApi api;
  std::string attempts;
  lib = DynamicLibrary::open_first(
      cuda_library_candidates(Options::global().cuda_home,
                              {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}),
      &attempts);
  if (!lib.loaded()) {
    return make_error(ErrorCode::kUnavailable,
                      "NVRTC not found: install the CUDA toolkit or set CUDA_HOME to it",
                      {{"tried", attempts}});
  }
  std::string missing;
  auto required = [&](auto& field, const char* name) {
    field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(lib.symbol(name));
    if (!field) missing += std::string(missing.empty() ? "" : ", ") + name;
  };
  auto optional = [&](auto& field, const char* name) {
    field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(lib.symbol(name));
  };
  required(api.Version, "nvrtcVersion");
  required(api.GetErrorString, "nvrtcGetErrorString");
  required(api.CreateProgram, "nvrtcCreateProgram");
  required(api.DestroyProgram, "nvrtcDestroyProgram");
  required(api.CompileProgram, "nvrtcCompileProgram");
  required(api.GetProgramLogSize, "nvrtcGetProgramLogSize");
  required(api.GetProgramLog, "nvrtcGetProgramLog");
  required(api.GetPTXSize, "nvrtcGetPTXSize");
  required(api.GetPTX, "nvrtcGetPTX");
  required(api.GetCUBINSize, "nvrtcGetCUBINSize");
  required(api.GetCUBIN, "nvrtcGetCUBIN");
  required(api.AddNameExpression, "nvrtcAddNameExpression");
  required(api.GetLoweredName, "nvrtcGetLoweredName");
  required(api.GetNumSupportedArchs, "nvrtcGetNumSupportedArchs");
  required(api.GetSupportedArchs, "nvrtcGetSupportedArchs");
  optional(api.SetFlowCallback, "nvrtcSetFlowCallback");
  optional(api.GetPCHHeapSize, "nvrtcGetPCHHeapSize");
  optional(api.SetPCHHeapSize, "nvrtcSetPCHHeapSize");
  optional(api.GetPCHCreateStatus, "nvrtcGetPCHCreateStatus");
  optional(api.GetPCHHeapSizeRequired, "nvrtcGetPCHHeapSizeRequired");
  if (!missing.empty()) {
    return make_error(
        ErrorCode::kUnavailable,
        "NVRTC at " + lib.path() + " lacks required entry points (too old?): " + missing,
        {{"fix", "point CUDA_HOME at a CUDA 12 or 13 toolkit"}});
  }
  if (api.Version(&api.major, &api.minor) != NVRTC_SUCCESS) {
    return make_error(ErrorCode::kUnavailable, "nvrtcVersion failed in " + lib.path());
  }
  api.library_path = lib.path();
  return &api;
}

}  // namespace

const Result<const NvrtcApi*>& nvrtc() {
  static const Result<const NvrtcApi*> loaded = load_nvrtc();
  return loaded;
}

}  // namespace kiln::cuda
