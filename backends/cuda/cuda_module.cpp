// CudaDevice: loading CUBINs and launching their functions, and the public
// factory (include/kiln/backends/cuda.hpp).
#include <algorithm>
#include <array>
#include <vector>

#include "cuda_device.hpp"
#include "kiln/backends/cuda.hpp"

namespace kiln::cuda {

CudaModule::~CudaModule() {
  if (module) {
    api->CtxSetCurrent(context);
    api->ModuleUnload(module);
  }
}

CudaKernelState::~CudaKernelState() {
  for (auto& [context, loaded] : in_contexts) {
    module->api->CtxSetCurrent(context);
    module->api->ModuleUnload(loaded.module);
  }
}

Result<CUfunction> CudaDevice::function_in(CudaKernelState& k, CUcontext context) {
  if (context == context_) return k.function;
  std::lock_guard lock(k.contexts_mutex);
  auto it = k.in_contexts.find(context);
  if (it != k.in_contexts.end()) return it->second.function;
  // The caller's context is current (bind): the module is loaded into it.
  CudaKernelState::InContext loaded;
  if (auto s = check(api_->ModuleLoadData(&loaded.module, k.module->binary->data()),
                     "cuModuleLoadData in the stream's context");
      !s) {
    return s.error();
  }
  if (auto s = check(api_->ModuleGetFunction(&loaded.function, loaded.module, k.symbol.c_str()),
                     "cuModuleGetFunction(" + k.symbol + ") in the stream's context");
      !s) {
    api_->ModuleUnload(loaded.module);
    return s.error();
  }
  k.in_contexts.emplace(context, loaded);
  return loaded.function;
}

Result<std::shared_ptr<CudaModule>> CudaDevice::module_for(const Artifact& artifact) {
  const std::string config = artifact.config.to_string();
  // By content hash: the G entries of a grouped program load one module,
  // whether they share one buffer or each read its copy from the cache.
  const Hash128 program = hash128(*artifact.binary);
  std::lock_guard lock(modules_mutex_);
  auto it = modules_.find(program);
  if (it != modules_.end()) {
    if (auto live = it->second.lock()) return live;
  }
  auto module = std::make_shared<CudaModule>();
  module->api = api_;
  module->context = context_;
  module->binary = artifact.binary;
  // From memory: a CUBIN (or PTX, which the driver JIT-compiles) never
  // touches the disk here; the artifact cache owns the files.
  if (CUresult r = api_->ModuleLoadData(&module->module, artifact.binary->data());
      r != CUDA_SUCCESS) {
    module->module = nullptr;
    return make_error(ErrorCode::kLaunchFailed,
                      "cannot load the " + std::string(binary_format_name(artifact.format)) +
                          " of kernel " + artifact.entry + " [" + config + "] on " +
                          props_.ref.to_string() + " (" + props_.arch + "): " + api_->describe(r),
                      {{"kernel", artifact.entry},
                       {"config", config},
                       {"device_arch", props_.arch},
                       {"binary_bytes", std::to_string(artifact.binary->size())}});
  }
  modules_[program] = module;
  return module;
}

Result<LoadedKernel> CudaDevice::load(const Artifact& artifact) {
  const std::string config = artifact.config.to_string();
  if (!artifact.binary || artifact.binary->empty()) {
    return make_error(ErrorCode::kInvalidArgument, "Artifact for " + artifact.entry +
                                                       " has no binary: fill it from the Artifact");
  }
  if (artifact.format == BinaryFormat::kCpuObject ||
      artifact.format == BinaryFormat::kCpuSharedObject) {
    return make_error(ErrorCode::kInvalidArgument,
                      "kernel " + artifact.entry + " was compiled for the CPU (a host object); " +
                          props_.ref.to_string() + " loads CUBIN or PTX: compile it with NVRTC");
  }
  if (auto s = bind(); !s) return s.error();
  auto module = module_for(artifact);
  if (!module) return module.error();
  auto state = std::make_unique<CudaKernelState>();
  state->owner = this;
  state->module = std::move(*module);
  state->symbol = artifact.lowered_name;
  if (CUresult r = api_->ModuleGetFunction(&state->function, state->module->module,
                                           artifact.lowered_name.c_str());
      r != CUDA_SUCCESS) {
    return make_error(
        ErrorCode::kNotFound,
        "kernel " + artifact.entry + " [" + config + "]: no function '" + artifact.lowered_name +
            "' in its module: " + api_->describe(r),
        {{"kernel", artifact.entry}, {"config", config}, {"symbol", artifact.lowered_name}});
  }
  // The driver's own starting allowance: 48 KiB minus the function's static
  // __shared__ bytes (cuda.h, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES),
  // so a kernel with both kinds gets the opt-in attribute when their sum
  // passes 48 KiB, not only when the dynamic part does.
  int dynamic_max = 0, static_bytes = 0;
  if (CUresult r = api_->FuncGetAttribute(
          &dynamic_max, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, state->function);
      r != CUDA_SUCCESS) {
    return make_error(ErrorCode::kLaunchFailed,
                      "kernel " + artifact.entry + " [" + config + "]: cannot query function '" +
                          artifact.lowered_name + "': " + api_->describe(r),
                      {{"kernel", artifact.entry}, {"config", config}});
  }
  api_->FuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, state->function);
  state->shared_allowed = static_cast<std::size_t>(std::max(dynamic_max, 0));
  state->shared_static = static_cast<std::size_t>(std::max(static_bytes, 0));
  return LoadedKernel(std::move(state), artifact.entry, config);
}

CUfunction CudaDevice::raw_function(const LoadedKernel& kernel) const {
  return kernel.state_for<CudaKernelState>(*this, "kernel").function;
}

namespace {

// Raises `function`'s opt-in dynamic shared memory attribute to what
// `config` asks for.
Status set_dynamic_shared(const DriverApi& api, const LoadedKernel& kernel,
                          const LaunchConfig& config, CUfunction function) {
  CUresult r = api.FuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    static_cast<int>(config.shared_bytes));
  if (r != CUDA_SUCCESS) {
    return launch_error(kernel, config,
                        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES): " + api.describe(r));
  }
  return ok_status();
}

// More than the default 48 KiB needs the function's opt-in attribute,
// raised once per new maximum: the lock is taken only on the rare launch
// that asks for more than any before it.
Status allow_shared(const DriverApi& api, const LoadedKernel& kernel, const LaunchConfig& config,
                    CudaKernelState& k) {
  if (config.shared_bytes <= k.shared_allowed.load(std::memory_order_acquire)) return ok_status();
  std::lock_guard lock(k.attribute_mutex);
  if (config.shared_bytes > k.shared_allowed.load()) {
    if (auto s = set_dynamic_shared(api, kernel, config, k.function); !s) return s;
    k.shared_allowed.store(config.shared_bytes, std::memory_order_release);
  }
  return ok_status();
}

CUlaunchConfig launch_config(const LaunchConfig& config, CUstream stream) {
  CUlaunchConfig lc{};
  lc.gridDimX = config.grid.x;
  lc.gridDimY = config.grid.y;
  lc.gridDimZ = config.grid.z;
  lc.blockDimX = config.block.x;
  lc.blockDimY = config.block.y;
  lc.blockDimZ = config.block.z;
  lc.sharedMemBytes = static_cast<unsigned>(config.shared_bytes);
  lc.hStream = stream;
  return lc;
}

Status launch_ex(const DriverApi& api, const LoadedKernel& kernel, const LaunchConfig& config,
                 const CUlaunchConfig& lc, CUfunction function, const KernelArgs& args) {
  // kernelParams on the stack for the usual few arguments: no allocation
  // on the launch path, whose cost the tuner's timings include.
  std::array<void*, 16> small{};
  std::vector<void*> large;
  void** params = small.data();
  if (args.size() > small.size()) {
    large.resize(args.size());
    params = large.data();
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    params[i] = const_cast<void*>(args.value_address(i));
  }
  CUresult r = api.LaunchKernelEx(&lc, function, args.empty() ? nullptr : params, nullptr);
  if (r != CUDA_SUCCESS) {
    return launch_error(kernel, config, "cuLaunchKernelEx: " + api.describe(r));
  }
  return ok_status();
}

}  // namespace

Status CudaDevice::launch(const LoadedKernel& kernel, const LaunchConfig& config,
                          const KernelArgs& args) {
  auto& k = kernel.state_for<CudaKernelState>(*this, "kernel");
  if (config.shared_bytes + k.shared_static > props_.shared_per_block_optin) {
    return launch_error(kernel, config,
                        "asks for more shared memory (" + std::to_string(k.shared_static) +
                            " bytes static + the dynamic) than " + props_.ref.to_string() +
                            " allows a block (" + std::to_string(props_.shared_per_block_optin) +
                            " bytes)",
                        ErrorCode::kInvalidArgument);
  }
  if (config.stream == nullptr && capturing_stream() != nullptr) {
    // The legacy default stream is not part of the capture (the captured
    // stream is non-blocking): the launch would run now and the graph would
    // be empty, timing nothing.
    return launch_error(kernel, config,
                        "launched on the default stream while this thread captures a stream: "
                        "set LaunchConfig::stream to the captured stream",
                        ErrorCode::kInvalidArgument);
  }
  if (auto s = bind(config.stream); !s) return launch_error(kernel, config, s.error().message);
  // On a caller's stream in a context of its own, the function loaded there.
  const CUcontext context = context_of(config.stream);
  CUfunction function = k.function;
  if (context != context_) {
    auto there = function_in(k, context);
    if (!there) return launch_error(kernel, config, there.error().message);
    function = *there;
    // Its own attribute, raised per launch: a rare path (a foreign
    // context and more than the default shared memory).
    if (config.shared_bytes + k.shared_static > 48 * 1024) {
      if (auto s = set_dynamic_shared(*api_, kernel, config, function); !s) return s;
    }
  }
  if (auto s = allow_shared(*api_, kernel, config, k); !s) return s;
  const CUlaunchConfig lc = launch_config(config, raw_stream(config.stream));
  return launch_ex(*api_, kernel, config, lc, function, args);
}

// ----------------------------------------------------------------- factory

Result<int> device_count() {
  const auto& api = driver();
  if (!api) return api.error();
  int count = 0;
  if (CUresult r = (*api)->DeviceGetCount(&count); r != CUDA_SUCCESS) {
    return make_error(ErrorCode::kUnavailable, "cuDeviceGetCount failed: " + (*api)->describe(r));
  }
  return count;
}

Result<std::unique_ptr<Device>> open_device(int index) {
  const auto& api = driver();
  if (!api) return api.error();
  return CudaDevice::open(**api, index);
}

Result<std::vector<std::unique_ptr<Device>>> open_devices(const std::vector<int>& indices) {
  std::vector<int> wanted = indices;
  if (wanted.empty()) {
    auto count = device_count();
    if (!count) return count.error();
    if (*count == 0) {
      return make_error(ErrorCode::kUnavailable, "the NVIDIA driver reports no CUDA device");
    }
    for (int i = 0; i < *count; ++i) wanted.push_back(i);
  }
  std::vector<std::unique_ptr<Device>> out;
  for (int i : wanted) {
    auto device = open_device(i);
    if (!device) return device.error();
    out.push_back(std::move(*device));
  }
  return out;
}

}  // namespace kiln::cuda
