// Device: where compiled code is loaded and run. One small interface, two
// backends: the CUDA driver (backends/cuda/, include/kiln/backends/cuda.hpp) and the
// host CPU through LLVM ORC (backends/cpu/, include/kiln/backends/cpu.hpp). The tuner
// and applications see only this header.
//
// Handles (Buffer, Stream, Event, Graph, LoadedKernel) are move-only RAII:
// destroying one releases its driver object. A handle belongs to the device
// that made it; passing it to another device is misuse and throws.
// Expected failures (a kernel that does not load, a launch the driver
// rejects, no driver on this machine) are values: Status / Result<T>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/compile/compile.hpp"
#include "kiln/core/device_traits.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/tensor.hpp"

namespace kiln {

struct Dim3 {
  std::uint32_t x = 1;
  std::uint32_t y = 1;
  std::uint32_t z = 1;

  std::uint64_t count() const { return std::uint64_t{x} * y * z; }
  std::string to_string() const;  // "(4,2,1)"
  bool operator==(const Dim3&) const = default;
};

// Blocks of `per_block` items each covering `items`: ceil(items /
// per_block), checked (no wrap of items + per_block - 1, no narrowing past
// a grid extent's 32 bits). Throws kiln::Error (kInvalidArgument) naming
// `what` ("grid.x for M=...") when items < 0, per_block < 1 or the count
// does not fit.
std::uint32_t grid_extent(std::int64_t items, std::int64_t per_block, std::string_view what);

// ---------------------------------------------------------------- arguments

// The type of one kernel argument. The CPU backend checks these against the
// compiled entry's parameter types before a launch (it calls a real C++
// function); CUDA passes the values' addresses as kernelParams.
enum class ArgType : std::uint8_t { kPointer, kBool, kI32, kU32, kI64, kU64, kF32, kF64 };

const char* arg_type_name(ArgType type);  // "ptr", "bool", "i32", ...

// A typed argument list: each value is stored in an 8-byte slot with its
// type. Pointers are device addresses (Buffer::data()).
//   KernelArgs args;  args.add(a.data()).add(b.data()).add(n).add(alpha);
class KernelArgs {
 public:
  KernelArgs() = default;
  template <class... Ts>
  static KernelArgs of(Ts... values) {
    KernelArgs args;
    (args.add(values), ...);
    return args;
  }

  template <class T>
  KernelArgs& add(T value) {
    if constexpr (std::is_pointer_v<T>) {
      return push(ArgType::kPointer, reinterpret_cast<std::uintptr_t>(value));
    } else if constexpr (std::is_same_v<T, bool>) {
      return push(ArgType::kBool, value);
    } else if constexpr (std::is_same_v<T, float>) {
      return push(ArgType::kF32, value);
    } else if constexpr (std::is_same_v<T, double>) {
      return push(ArgType::kF64, value);
    } else if constexpr (std::is_integral_v<T> && sizeof(T) == 4) {
      return push(std::is_signed_v<T> ? ArgType::kI32 : ArgType::kU32, value);
    } else if constexpr (std::is_integral_v<T> && sizeof(T) == 8) {
      return push(std::is_signed_v<T> ? ArgType::kI64 : ArgType::kU64, value);
    } else {
      static_assert(sizeof(T) == 0,
                    "KernelArgs takes pointers, bool, 32/64-bit integers, float and double; "
                    "cast other types to one of these");
    }
  }

  std::size_t size() const { return slots_.size(); }
  bool empty() const { return slots_.empty(); }
  ArgType type(std::size_t i) const { return slots_.at(i).type; }
  // Address of argument i's value, as CUDA's kernelParams[i] wants it.
  const void* value_address(std::size_t i) const { return &slots_.at(i).bits; }
  // kernelParams for cuLaunchKernelEx: valid while this object lives unchanged.
  std::vector<void*> param_pointers() const;
  // "(ptr, ptr, i32, f32)".
  std::string signature() const;

 private:
  struct Slot {
    ArgType type;
    std::uint64_t bits;  // the value, memcpy'd into the low bytes (little-endian)
  };
  template <class T>
  KernelArgs& push(ArgType type, T value) {
    Slot slot{type, 0};
    std::memcpy(&slot.bits, &value, sizeof value);
    slots_.push_back(slot);
    return *this;
  }
  std::vector<Slot> slots_;
};

// ------------------------------------------------------------------ handles

class Device;

namespace detail {
// A backend's state behind a handle. Backends derive from it; the virtual
// destructor releases the driver object.
struct HandleState {
  virtual ~HandleState() = default;
  const Device* owner = nullptr;
};
}  // namespace detail

class DeviceHandle {
 public:
  DeviceHandle() = default;
  explicit DeviceHandle(std::unique_ptr<detail::HandleState> state) : state_(std::move(state)) {}
  DeviceHandle(DeviceHandle&&) noexcept = default;
  DeviceHandle& operator=(DeviceHandle&&) noexcept = default;
  DeviceHandle(const DeviceHandle&) = delete;
  DeviceHandle& operator=(const DeviceHandle&) = delete;
  ~DeviceHandle() = default;

  bool valid() const { return state_ != nullptr; }
  const Device* owner() const { return state_ ? state_->owner : nullptr; }

  // For backends: the state, checked to belong to `device` and to be of the
  // backend's type. Throws kiln::Error (misuse) otherwise, naming `what`.
  template <class S>
  S& state_for(const Device& device, const char* what) const {
    check_owner(device, what);
    auto* s = dynamic_cast<S*>(state_.get());
    if (!s) throw_wrong_backend(what);
    return *s;
  }

 private:
  void check_owner(const Device& device, const char* what) const;
  [[noreturn]] static void throw_wrong_backend(const char* what);
  std::unique_ptr<detail::HandleState> state_;
};

// Device memory. data() is the device address (a CUdeviceptr on CUDA, a host
// pointer on the CPU); size() in bytes.
class Buffer : public DeviceHandle {
 public:
  Buffer() = default;
  Buffer(std::unique_ptr<detail::HandleState> state, void* data, std::size_t size)
      : DeviceHandle(std::move(state)), data_(data), size_(size) {}
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    DeviceHandle::operator=(std::move(other));
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  ~Buffer() = default;

  void* data() const { return data_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

// An in-order queue of work. A null Stream* means the device's default stream.
class Stream : public DeviceHandle {
  using DeviceHandle::DeviceHandle;
};

// A point in a stream whose completion time can be read (timing).
class Event : public DeviceHandle {
  using DeviceHandle::DeviceHandle;
};

// Work captured from a stream, replayable with one call (strips per-launch
// host overhead from timings).
class Graph : public DeviceHandle {
  using DeviceHandle::DeviceHandle;
};

// A kernel ready to launch on its device. Keeps its module alive.
class LoadedKernel : public DeviceHandle {
 public:
  LoadedKernel() = default;
  LoadedKernel(std::unique_ptr<detail::HandleState> state, std::string name, std::string config)
      : DeviceHandle(std::move(state)), name_(std::move(name)), config_(std::move(config)) {}
  const std::string& name() const { return name_; }
  const std::string& config() const { return config_; }

 private:
  std::string name_;
  std::string config_;
};

// Bytes of device memory a kernel touches: `bytes` from `data` (none when
// `bytes` is 0).
struct DeviceSpan {
  const void* data = nullptr;
  std::size_t bytes = 0;
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  std::size_t shared_bytes = 0;  // dynamic shared memory per block
  Stream* stream = nullptr;      // nullptr: the default stream
};

// -------------------------------------------------------------- properties

struct DeviceProperties {
  DeviceRef ref;     // "cuda:0", "cpu"
  std::string name;  // "NVIDIA H100 80GB HBM3", "host CPU znver3 (16 threads)"
  std::string arch;  // "sm_90"; on the CPU the LLVM host CPU name, "znver3"
  int cc_major = 0;  // compute capability (0 on the CPU)
  int cc_minor = 0;
  int sm_count = 0;                        // multiprocessors; on the CPU, worker threads
  std::size_t shared_per_block = 0;        // without opt-in (48 KiB on CUDA)
  std::size_t shared_per_block_optin = 0;  // the most a kernel may ask for
  std::size_t shared_per_sm = 0;
  std::size_t l2_bytes = 0;  // on the CPU, the last-level cache
  std::size_t total_memory = 0;
  int max_threads_per_block = 0;
  // What config spaces' device constraints read (ConfigSpace::for_device):
  // vector width and registers, caches, shared memory, cores.
  DeviceTraits traits;
};

// The host CPU as device constraints see it: the widest vector unit the
// compiler's -march=native targets (AVX-512: 512 bits x 32 registers; AVX2
// or AVX: 256 x 16; else SSE: 128 x 16), per-core L1d and L2 and the shared
// L3 from sysfs (0 when unknown), 1 MiB of block scratch (the CPU device's
// shared memory), and `cores` as given.
DeviceTraits host_cpu_traits(int cores = 0);

// ------------------------------------------------------------------ device

class Device {
 public:
  virtual ~Device() = default;
  Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  virtual const DeviceProperties& properties() const = 0;

  // Code: one entry of a compiled artifact (its binary, lowered name and
  // format). The G entries of one grouped program share their binary and
  // load one module. Fails (a value) when the binary is of another backend,
  // does not load, or lacks the symbol; the error names kernel and config.
  virtual Result<LoadedKernel> load(const Artifact& artifact) = 0;
  // Fails (a value) when the driver rejects the launch; the error names the
  // kernel, config, grid, block and shared memory. Asynchronous on CUDA.
  virtual Status launch(const LoadedKernel& kernel, const LaunchConfig& config,
                        const KernelArgs& args) = 0;

  // Memory. Copies and fills are ordered on `stream`.
  virtual Result<Buffer> allocate(std::size_t bytes) = 0;
  virtual Status copy_to_device(void* dst, const void* host_src, std::size_t bytes,
                                Stream* stream = nullptr) = 0;
  virtual Status copy_to_host(void* host_dst, const void* src, std::size_t bytes,
                              Stream* stream = nullptr) = 0;
  virtual Status copy(void* dst, const void* src, std::size_t bytes, Stream* stream = nullptr) = 0;
  virtual Status fill(void* dst, std::uint8_t byte, std::size_t bytes,
                      Stream* stream = nullptr) = 0;

  // Streams, events, synchronisation.
  virtual Result<Stream> create_stream() = 0;
  // A stream the caller owns, borrowed, so that Kiln's launches, copies and
  // fills on it are ordered with the caller's own work there (a framework's
  // current stream). On CUDA `native` is a CUstream (0: the legacy default
  // stream, 2: the per-thread one), and work on it runs in the stream's
  // context: the caller's, which need not be the primary context (kernels
  // are loaded into it on first use); for the default streams, the
  // caller's current context, else the device's primary context. A stream
  // of another device is an error (kInvalidArgument, naming both). The
  // handle never destroys the stream: the caller keeps it alive while the
  // handle is used. The CPU runs all work in order, synchronously, and
  // ignores `native`. Devices that cannot borrow a stream say so (the
  // default).
  virtual Result<Stream> wrap_stream(std::uintptr_t native);
  virtual Result<Event> create_event() = 0;
  virtual Status record(Event& event, Stream* stream = nullptr) = 0;
  // Milliseconds between two recorded events (waits for `stop`).
  virtual Result<float> elapsed_ms(const Event& start, const Event& stop) = 0;
  virtual Status synchronize(Stream* stream = nullptr) = 0;  // nullptr: the whole device

  // Graphs: work issued on `stream` between begin and end is recorded, not run.
  virtual Status begin_capture(Stream& stream) = 0;
  virtual Result<Graph> end_capture(Stream& stream) = 0;
  virtual Status replay(const Graph& graph, Stream* stream = nullptr) = 0;

  // For the tuner: make the next launch find its data in memory, not in a
  // cache. `touched` is what the kernel reads and writes (the call's tensor
  // arguments); it is copied when `stream` is capturing. CUDA writes a
  // buffer twice the L2 (the list is not needed: the L2 is the only cache
  // kept between launches); the CPU evicts exactly the touched bytes from
  // every cache level with a cache-line flush, so the cost follows the
  // arguments, not the size of the machine's last-level cache.
  virtual Status flush_caches(std::span<const DeviceSpan> touched, Stream* stream = nullptr) = 0;
  // Occupies `stream` for about `microseconds` so that the launches queued
  // behind it are timed without host launch overhead.
  virtual Status delay(double microseconds, Stream* stream = nullptr) = 0;
};

// The error every backend returns for a failed launch: names the kernel,
// config, grid, block and shared memory, plus `reason` (the driver's word).
ErrorInfo launch_error(const LoadedKernel& kernel, const LaunchConfig& config,
                       const std::string& reason, ErrorCode code = ErrorCode::kLaunchFailed);

}  // namespace kiln
