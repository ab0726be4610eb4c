#include "delay_kernel.hpp"

#include <vector>

#include "nvrtc_api.hpp"

namespace kiln::cuda {

const char* delay_kernel_source() {
  return R"(extern "C" __global__ void kiln_delay_ns(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}
)";
}

Result<std::string> compile_delay_kernel(const std::string& arch) {
  return compile_builtin_cubin(delay_kernel_source(), "kiln_delay.cu", arch);
}

Result<std::string> compile_builtin_cubin(const char* source, const char* program_name,
                                          const std::string& arch) {
  const auto& loaded = nvrtc();
  if (!loaded) return loaded.error();
  const NvrtcApi& api = **loaded;
  nvrtcProgram prog = nullptr;
  if (nvrtcResult r = api.CreateProgram(&prog, source, program_name, 0, nullptr, nullptr);
      r != NVRTC_SUCCESS) {
    return make_error(
        ErrorCode::kCompileFailed,
        "nvrtcCreateProgram (" + std::string(program_name) + "): " + api.GetErrorString(r));
  }
  struct Destroy {
    const NvrtcApi& api;
    nvrtcProgram& prog;
    ~Destroy() { api.DestroyProgram(&prog); }
  } destroy{api, prog};
  // sm_XY gives a CUBIN for exactly this device: no driver JIT on load.
  std::string arch_option = "--gpu-architecture=" + arch;
  std::vector<const char*> options = {arch_option.c_str()};
  nvrtcResult r = api.CompileProgram(prog, static_cast<int>(options.size()), options.data());
  std::size_t log_size = 0;
  api.GetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size) api.GetProgramLog(prog, log.data());
  if (r != NVRTC_SUCCESS) {
    return make_error(ErrorCode::kCompileFailed,
                      "NVRTC " + api.version_string() + " cannot compile " + program_name +
                          " for " + arch + ": " + api.GetErrorString(r),
                      {{"log", log}, {"options", arch_option}});
  }
  std::size_t size = 0;
  api.GetCUBINSize(prog, &size);
  std::string cubin(size, '\0');
  api.GetCUBIN(prog, cubin.data());
  return cubin;
}

}  // namespace kiln::cuda
