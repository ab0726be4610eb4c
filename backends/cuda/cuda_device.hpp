// CudaDevice: kiln::Device on the CUDA driver API, on the device's primary
// context (shared with the CUDA runtime and every other library in the
// process, so buffers and streams interoperate with theirs).
#pragma once

#include <cuda.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "driver_api.hpp"
#include "kiln/core/hash.hpp"
#include "kiln/device/device.hpp"

namespace kiln::cuda {

// One CUBIN loaded into one device's context. Shared by the kernels taken
// from it (G entries of one artifact load the module once).
struct CudaModule {
  const DriverApi* api = nullptr;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  std::shared_ptr<const std::string> binary;  // keeps the cache key's address alive
  ~CudaModule();
};

// A function of a loaded module.
struct CudaKernelState : detail::HandleState {
  std::shared_ptr<CudaModule> module;
  CUfunction function = nullptr;
  std::string symbol;
  // The dynamic shared memory the function is currently allowed (the
  // attribute is raised on first need, never lowered). Starts at the
  // driver's default, 48 KiB minus the function's static shared memory.
  std::atomic<std::size_t> shared_allowed{0};
  std::size_t shared_static = 0;  // __shared__ arrays: count against the opt-in limit too
  std::mutex attribute_mutex;
  // The same function loaded into contexts other than the device's primary
  // one (a caller's stream in a context of its own: Device::wrap_stream),
  // on the first launch there; unloaded with the kernel. The caller's
  // context must outlive the kernel.
  struct InContext {
    CUmodule module = nullptr;
    CUfunction function = nullptr;
  };
  std::mutex contexts_mutex;
  std::map<CUcontext, InContext> in_contexts;
  ~CudaKernelState() override;
};

class CudaDevice final : public Device {
 public:
  // Retains the primary context; errors are values.
  static Result<std::unique_ptr<Device>> open(const DriverApi& api, int index);
  ~CudaDevice() override;

  const DeviceProperties& properties() const override { return props_; }

  Result<LoadedKernel> load(const Artifact& artifact) override;
  Status launch(const LoadedKernel& kernel, const LaunchConfig& config,
                const KernelArgs& args) override;

  Result<Buffer> allocate(std::size_t bytes) override;
  Status copy_to_device(void* dst, const void* host_src, std::size_t bytes,
                        Stream* stream) override;
  Status copy_to_host(void* host_dst, const void* src, std::size_t bytes, Stream* stream) override;
  Status copy(void* dst, const void* src, std::size_t bytes, Stream* stream) override;
  Status fill(void* dst, std::uint8_t byte, std::size_t bytes, Stream* stream) override;

  Result<Stream> create_stream() override;
  Result<Stream> wrap_stream(std::uintptr_t native) override;
  Result<Event> create_event() override;
  Status record(Event& event, Stream* stream) override;
  Result<float> elapsed_ms(const Event& start, const Event& stop) override;
  Status synchronize(Stream* stream) override;

  Status begin_capture(Stream& stream) override;
  Result<Graph> end_capture(Stream& stream) override;
  Status replay(const Graph& graph, Stream* stream) override;

  Status flush_caches(std::span<const DeviceSpan> touched, Stream* stream) override;
  Status delay(double microseconds, Stream* stream) override;

  // For the launch-overhead benchmark: the raw handles behind a kernel and a stream.
  CUfunction raw_function(const LoadedKernel& kernel) const;
  CUstream raw_stream(Stream* stream) const;
  const DriverApi& api() const { return *api_; }

 private:
  CudaDevice(const DriverApi& api, CUdevice device, CUcontext context, DeviceProperties props);
  // Makes the primary context current on the calling thread (threads of a
  // tuner call in from anywhere); with a stream, the stream's context (a
  // caller's stream may live in a context of its own).
  Status bind() const;
  Status bind(Stream* stream) const;
  // The context work on `stream` runs in: the primary one for Kiln's own
  // streams and the default stream, the caller's for a wrapped stream.
  CUcontext context_of(Stream* stream) const;
  // `k`'s function in `context` (loaded there on first use).
  Result<CUfunction> function_in(CudaKernelState& k, CUcontext context);
  Status check(CUresult result, const std::string& what) const;
  // The stream this thread is capturing on this device, or nullptr.
  CUstream capturing_stream() const;
  Result<std::shared_ptr<CudaModule>> module_for(const Artifact& artifact);

  const DriverApi* api_;
  CUdevice device_;
  CUcontext context_;
  DeviceProperties props_;

  std::mutex modules_mutex_;
  // Keyed by the content hash of the binary: one module per distinct
  // program, however many entries (and copies of the bytes) name it;
  // expired entries are replaced.
  std::map<Hash128, std::weak_ptr<CudaModule>> modules_;

  std::mutex tools_mutex_;  // the L2 flush buffer and the delay kernel, made on first use
  Buffer flush_buffer_;
  LoadedKernel delay_kernel_;
};

}  // namespace kiln::cuda
