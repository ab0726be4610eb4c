// CudaDevice: context, properties, memory, streams, events, graphs and the
// tuner's tools (L2 flush, delay kernel). Loading and launching code is in
// cuda_module.cpp.
#include "cuda_device.hpp"

#include <algorithm>
#include <cstdio>

#include "delay_kernel.hpp"

namespace kiln::cuda {

namespace {

struct BufferState : detail::HandleState {
  const DriverApi* api = nullptr;
  CUcontext context = nullptr;
  CUdeviceptr ptr = 0;
  ~BufferState() override {
    if (ptr) {
      api->CtxSetCurrent(context);
      api->MemFree(ptr);
    }
  }
};

struct StreamState : detail::HandleState {
  const DriverApi* api = nullptr;
  CUstream stream = nullptr;
  // A caller's stream (wrap_stream) is borrowed, never destroyed here, and
  // its work runs in the caller's context.
  bool owned = true;
  CUcontext context = nullptr;  // null: the device's primary context
  ~StreamState() override {
    if (stream && owned) api->StreamDestroy(stream);
  }
};

struct EventState : detail::HandleState {
  const DriverApi* api = nullptr;
  CUevent event = nullptr;
  ~EventState() override {
    if (event) api->EventDestroy(event);
  }
};

struct GraphState : detail::HandleState {
  const DriverApi* api = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  ~GraphState() override {
    if (exec) api->GraphExecDestroy(exec);
    if (graph) api->GraphDestroy(graph);
  }
};

CUdeviceptr dptr(const void* p) {
  return reinterpret_cast<CUdeviceptr>(p);
}

// The capture this thread has open (begin_capture .. end_capture). A launch
// on the default (legacy) stream meanwhile is not captured: it would run at
// once and leave the graph empty, so launch() refuses it (see there).
struct OpenCapture {
  const void* device = nullptr;
  CUstream stream = nullptr;
};
thread_local OpenCapture open_capture;

}  // namespace

CudaDevice::CudaDevice(const DriverApi& api, CUdevice device, CUcontext context,
                       DeviceProperties props)
    : api_(&api), device_(device), context_(context), props_(std::move(props)) {}

CudaDevice::~CudaDevice() {
  // Handles owned by the device itself go before the context is released.
  flush_buffer_ = Buffer();
  delay_kernel_ = LoadedKernel();
  api_->DevicePrimaryCtxRelease(device_);
}

Result<std::unique_ptr<Device>> CudaDevice::open(const DriverApi& api, int index) {
  int count = 0;
  if (CUresult r = api.DeviceGetCount(&count); r != CUDA_SUCCESS) {
    return make_error(ErrorCode::kUnavailable, "cuDeviceGetCount failed: " + api.describe(r));
  }
  if (count == 0) {
    return make_error(ErrorCode::kUnavailable, "the NVIDIA driver reports no CUDA device");
  }
  if (index < 0 || index >= count) {
    return make_error(ErrorCode::kInvalidArgument,
                      "CUDA device index " + std::to_string(index) +
                          " is out of range: " + std::to_string(count) + " device(s), indices 0.." +
                          std::to_string(count - 1));
  }
  CUdevice dev = 0;
  if (CUresult r = api.DeviceGet(&dev, index); r != CUDA_SUCCESS) {
    return make_error(ErrorCode::kUnavailable, "cuDeviceGet failed: " + api.describe(r));
  }
  CUcontext ctx = nullptr;
  if (CUresult r = api.DevicePrimaryCtxRetain(&ctx, dev); r != CUDA_SUCCESS) {
    return make_error(ErrorCode::kUnavailable, "cannot retain the primary context of cuda:" +
                                                   std::to_string(index) + ": " + api.describe(r));
  }
  DeviceProperties p;
  p.ref = {"cuda", index};
  char name[256] = {};
  api.DeviceGetName(name, sizeof name, dev);
  p.name = name;
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    api.DeviceGetAttribute(&v, a, dev);
    return v;
  };
  p.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  p.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  p.arch = "sm_" + std::to_string(p.cc_major * 10 + p.cc_minor);
  p.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  p.shared_per_block =
      static_cast<std::size_t>(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  p.shared_per_block_optin =
      static_cast<std::size_t>(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  p.shared_per_sm =
      static_cast<std::size_t>(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
  p.l2_bytes = static_cast<std::size_t>(attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  p.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  // Device constraints see shared memory, registers and L2; a thread's
  // widest load is 128 bits and there is no vector register file to fit.
  p.traits.name = p.arch;
  p.traits.vector_bits = 128;
  p.traits.vector_registers = 0;
  p.traits.l2_bytes = p.l2_bytes;
  p.traits.shared_per_block = p.shared_per_block_optin;
  p.traits.registers_per_thread = 255;
  p.traits.cores = p.sm_count;
  std::size_t total = 0;
  api.DeviceTotalMem(&total, dev);
  p.total_memory = total;
  return std::unique_ptr<Device>(new CudaDevice(api, dev, ctx, std::move(p)));
}

CUstream CudaDevice::capturing_stream() const {
  return open_capture.device == this ? open_capture.stream : nullptr;
}

Status CudaDevice::bind() const {
  return check(api_->CtxSetCurrent(context_), "cuCtxSetCurrent");
}

Status CudaDevice::check(CUresult result, const std::string& what) const {
  if (result == CUDA_SUCCESS) return ok_status();
  return make_error(ErrorCode::kLaunchFailed,
                    what + " failed on " + props_.ref.to_string() + ": " + api_->describe(result),
                    {{"device", props_.ref.to_string() + " " + props_.name}});
}

CUstream CudaDevice::raw_stream(Stream* stream) const {
  return stream ? stream->state_for<StreamState>(*this, "stream").stream : nullptr;
}

CUcontext CudaDevice::context_of(Stream* stream) const {
  if (!stream) return context_;
  CUcontext c = stream->state_for<StreamState>(*this, "stream").context;
  return c ? c : context_;
}

Status CudaDevice::bind(Stream* stream) const {
  return check(api_->CtxSetCurrent(context_of(stream)), "cuCtxSetCurrent");
}

// ------------------------------------------------------------------ memory

Result<Buffer> CudaDevice::allocate(std::size_t bytes) {
  if (auto s = bind(); !s) return s.error();
  auto state = std::make_unique<BufferState>();
  state->owner = this;
  state->api = api_;
  state->context = context_;
  if (auto s = check(api_->MemAlloc(&state->ptr, bytes == 0 ? 1 : bytes),
                     "cuMemAlloc(" + std::to_string(bytes) + " bytes)");
      !s) {
    return s.error();
  }
  void* data = reinterpret_cast<void*>(state->ptr);
  return Buffer(std::move(state), data, bytes);
}

Status CudaDevice::copy_to_device(void* dst, const void* host_src, std::size_t bytes,
                                  Stream* stream) {
  if (auto s = bind(stream); !s) return s;
  return check(api_->MemcpyHtoDAsync(dptr(dst), host_src, bytes, raw_stream(stream)),
               "cuMemcpyHtoDAsync");
}

Status CudaDevice::copy_to_host(void* host_dst, const void* src, std::size_t bytes,
                                Stream* stream) {
  if (auto s = bind(stream); !s) return s;
  // Synchronous on return, like the CPU device: the caller reads host_dst next.
  CUstream raw = raw_stream(stream);
  if (auto s = check(api_->MemcpyDtoHAsync(host_dst, dptr(src), bytes, raw), "cuMemcpyDtoHAsync");
      !s) {
    return s;
  }
  return check(api_->StreamSynchronize(raw), "cuStreamSynchronize");
}

Status CudaDevice::copy(void* dst, const void* src, std::size_t bytes, Stream* stream) {
  if (auto s = bind(stream); !s) return s;
  return check(api_->MemcpyDtoDAsync(dptr(dst), dptr(src), bytes, raw_stream(stream)),
               "cuMemcpyDtoDAsync");
}

Status CudaDevice::fill(void* dst, std::uint8_t byte, std::size_t bytes, Stream* stream) {
  if (auto s = bind(stream); !s) return s;
  return check(api_->MemsetD8Async(dptr(dst), byte, bytes, raw_stream(stream)), "cuMemsetD8Async");
}

// ------------------------------------------------- streams, events, graphs

Result<Stream> CudaDevice::create_stream() {
  if (auto s = bind(); !s) return s.error();
  auto state = std::make_unique<StreamState>();
  state->owner = this;
  state->api = api_;
  if (auto s = check(api_->StreamCreate(&state->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
      !s) {
    return s.error();
  }
  return Stream(std::move(state));
}

Result<Stream> CudaDevice::wrap_stream(std::uintptr_t native) {
  CUstream raw = reinterpret_cast<CUstream>(native);
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(native));
  const std::string name = "CUDA stream " + std::string(hex);
  // The default streams have no context of their own: they are the
  // calling thread's current context's (else the primary context's).
  CUcontext context = nullptr;
  if (raw == nullptr || raw == CU_STREAM_LEGACY || raw == CU_STREAM_PER_THREAD) {
    if (api_->CtxGetCurrent(&context) != CUDA_SUCCESS) context = nullptr;
  } else if (CUresult r = api_->StreamGetCtx(raw, &context); r != CUDA_SUCCESS) {
    return make_error(ErrorCode::kInvalidArgument,
                      name + " is not a stream the driver knows (" + api_->describe(r) +
                          "): pass the handle of a live CUstream (a framework's "
                          "stream.cuda_stream / __cuda_stream__), or 0 for the default stream");
  }
  if (context == nullptr) context = context_;
  if (context != context_) {
    // Another context: it must be of this device (a stream of another GPU
    // would run the kernel there, on memory it cannot see).
    CUdevice other = -1;
    CUresult r = api_->CtxSetCurrent(context);
    if (r == CUDA_SUCCESS) r = api_->CtxGetDevice(&other);
    if (r != CUDA_SUCCESS) return check(r, "cuCtxGetDevice for " + name).error();
    if (other != device_) {
      return make_error(
          ErrorCode::kInvalidArgument,
          name + " belongs to cuda:" + std::to_string(other) + ", not to " +
              props_.ref.to_string() +
              ": launch on a stream of the device the kernel was loaded on",
          {{"stream_device", "cuda:" + std::to_string(other)}, {"device", props_.ref.to_string()}});
    }
  }
  auto state = std::make_unique<StreamState>();
  state->owner = this;
  state->api = api_;
  state->stream = raw;
  state->owned = false;
  state->context = context == context_ ? nullptr : context;
  return Stream(std::move(state));
}

Result<Event> CudaDevice::create_event() {
  if (auto s = bind(); !s) return s.error();
  auto state = std::make_unique<EventState>();
  state->owner = this;
  state->api = api_;
  if (auto s = check(api_->EventCreate(&state->event, CU_EVENT_DEFAULT), "cuEventCreate"); !s) {
    return s.error();
  }
  return Event(std::move(state));
}

Status CudaDevice::record(Event& event, Stream* stream) {
  if (auto s = bind(stream); !s) return s;
  auto& e = event.state_for<EventState>(*this, "event");
  return check(api_->EventRecord(e.event, raw_stream(stream)), "cuEventRecord");
}

Result<float> CudaDevice::elapsed_ms(const Event& start, const Event& stop) {
  if (auto s = bind(); !s) return s.error();
  auto& a = start.state_for<EventState>(*this, "start event");
  auto& b = stop.state_for<EventState>(*this, "stop event");
  if (auto s = check(api_->EventSynchronize(b.event), "cuEventSynchronize"); !s) return s.error();
  float ms = 0;
  if (auto s = check(api_->EventElapsedTime(&ms, a.event, b.event), "cuEventElapsedTime"); !s) {
    return s.error();
  }
  return ms;
}

Status CudaDevice::synchronize(Stream* stream) {
  if (auto s = bind(stream); !s) return s;
  if (stream) return check(api_->StreamSynchronize(raw_stream(stream)), "cuStreamSynchronize");
  return check(api_->CtxSynchronize(), "cuCtxSynchronize");
}

Status CudaDevice::begin_capture(Stream& stream) {
  if (auto s = bind(&stream); !s) return s;
  // Thread-local mode: other threads' unsafe calls (a benchmark worker on
  // another device) do not invalidate this capture.
  CUstream raw = raw_stream(&stream);
  Status st = check(api_->StreamBeginCapture(raw, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                    "cuStreamBeginCapture");
  if (st) open_capture = {this, raw};
  return st;
}

Result<Graph> CudaDevice::end_capture(Stream& stream) {
  if (open_capture.device == this && open_capture.stream == raw_stream(&stream)) {
    open_capture = {};
  }
  if (auto s = bind(&stream); !s) return s.error();
  auto state = std::make_unique<GraphState>();
  state->owner = this;
  state->api = api_;
  if (auto s =
          check(api_->StreamEndCapture(raw_stream(&stream), &state->graph), "cuStreamEndCapture");
      !s) {
    return s.error();
  }
  if (auto s = check(api_->GraphInstantiate(&state->exec, state->graph, 0), "cuGraphInstantiate");
      !s) {
    return s.error();
  }
  return Graph(std::move(state));
}

Status CudaDevice::replay(const Graph& graph, Stream* stream) {
  if (auto s = bind(stream); !s) return s;
  auto& g = graph.state_for<GraphState>(*this, "graph");
  return check(api_->GraphLaunch(g.exec, raw_stream(stream)), "cuGraphLaunch");
}

// --------------------------------------------------------- tuner's tools

// NOTES: the list of touched buffers is not needed: global data survives
// from one launch to the next only in the L2 (an SM's L1 is not coherent,
// so what it cached is not reused by a later kernel), and writing twice the
// L2 evicts all of it for a few tens of microseconds of device bandwidth.
Status CudaDevice::flush_caches(std::span<const DeviceSpan> /*touched*/, Stream* stream) {
  std::size_t bytes = 0;
  void* data = nullptr;
  {
    std::lock_guard lock(tools_mutex_);
    if (!flush_buffer_.valid()) {
      // Twice the L2: writing it evicts every line a measured kernel left.
      auto buffer = allocate(std::max<std::size_t>(2 * props_.l2_bytes, 1u << 20));
      if (!buffer) return buffer.error();
      flush_buffer_ = std::move(*buffer);
    }
    bytes = flush_buffer_.size();
    data = flush_buffer_.data();
  }
  return fill(data, 0, bytes, stream);
}

Status CudaDevice::delay(double microseconds, Stream* stream) {
  {
    std::lock_guard lock(tools_mutex_);
    if (!delay_kernel_.valid()) {
      auto cubin = compile_delay_kernel(props_.arch);
      if (!cubin) return cubin.error();
      Artifact artifact;
      artifact.kernel = artifact.entry = artifact.lowered_name = kDelayKernelSymbol;
      artifact.format = BinaryFormat::kCubin;
      artifact.arch = props_.arch;
      artifact.binary = std::make_shared<const std::string>(std::move(*cubin));
      auto kernel = load(artifact);
      if (!kernel) return kernel.error();
      delay_kernel_ = std::move(*kernel);
    }
  }
  auto ns = static_cast<std::uint64_t>(microseconds * 1000.0);
  LaunchConfig config;
  config.stream = stream;
  return launch(delay_kernel_, config, KernelArgs::of(ns));
}

}  // namespace kiln::cuda
