#include "cpu_device.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "cache_flush.hpp"
#include "kiln/backends/cpu.hpp"
#include "kiln/core/log.hpp"

namespace kiln::cpu {

namespace {

// The most dynamic shared memory a CPU block may ask for: scratch per
// worker, sized like a core's private L2 so a tile kept there stays hot.
constexpr std::size_t kSharedLimit = 1u << 20;

struct BufferState : detail::HandleState {
  void* data = nullptr;
  ~BufferState() override { std::free(data); }
};

struct StreamState : detail::HandleState {
  bool capturing = false;
  std::vector<std::function<Status()>> captured;
};

struct EventState : detail::HandleState {
  bool recorded = false;
  std::chrono::steady_clock::time_point time;
};

struct GraphState : detail::HandleState {
  std::vector<std::function<Status()>> work;
};

// The last-level cache from sysfs ("32768K"), or 32 MiB when unreadable.
std::size_t last_level_cache_bytes() {
  std::size_t best = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string text;
    if (!(in >> text) || text.empty()) continue;
    std::size_t scale = 1;
    if (text.back() == 'K') scale = 1u << 10;
    if (text.back() == 'M') scale = 1u << 20;
    best = std::max<std::size_t>(best, std::strtoull(text.c_str(), nullptr, 10) * scale);
  }
  return best ? best : std::size_t{32} << 20;
}

// The memory this process may use: physical memory, or the cgroup's limit
// when a container sets a lower one (where allocating more gets the process
// killed, not refused). 0 when unknown.
std::size_t host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  std::size_t bytes =
      pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
  for (const char* limit :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(limit);
    std::size_t value = 0;
    if (in >> value && value > 0 && (bytes == 0 || value < bytes))
      bytes = value;  // "max": no limit
  }
  return bytes;
}

std::string signature_text(const Signature& s) {
  std::string out = "(";
  for (unsigned i = 0; i < s.count && i < kMaxArgs; ++i) {
    out += (i ? ", " : "");
    out += arg_type_name(static_cast<ArgType>(s.types[i]));
  }
  return out + ")";
}

}  // namespace

CpuDevice::CpuDevice(int threads, const HostCpu& host, ToolchainSource toolchain)
    : toolchain_(toolchain), pool_(threads), shared_(static_cast<std::size_t>(pool_.threads())) {
  props_.ref = {kHostBackend, 0};
  props_.arch = host.name;
  props_.name = "host CPU " + props_.arch + " (" + std::to_string(pool_.threads()) + " threads)";
  props_.sm_count = pool_.threads();
  props_.shared_per_block = kSharedLimit;
  props_.shared_per_block_optin = kSharedLimit;
  props_.shared_per_sm = kSharedLimit;
  props_.l2_bytes = last_level_cache_bytes();
  props_.total_memory = host_memory_bytes();
  props_.max_threads_per_block = 1024;
  props_.traits = host_cpu_traits(pool_.threads());
  props_.traits.shared_per_block = kSharedLimit;
  if (!pool_.start_error().empty()) KILN_LOG(kWarn) << pool_.start_error();
}

CpuDevice::~CpuDevice() = default;

// ------------------------------------------------------------------- code

Result<LoadedKernel> CpuDevice::load(const Artifact& artifact) {
  const std::string config = artifact.config.to_string();
  const std::string label = artifact.entry + " [" + config + "]";
  if (!artifact.binary || artifact.binary->empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "Artifact for " + artifact.entry + " has no binary: compile it first");
  }
  if (artifact.format != BinaryFormat::kCpuObject &&
      artifact.format != BinaryFormat::kCpuSharedObject) {
    return make_error(ErrorCode::kInvalidArgument,
                      "kernel " + label + " is a " + binary_format_name(artifact.format) +
                          "; the CPU device loads cpu_shared_object and cpu_object artifacts: "
                          "compile it with kiln::cpu::make_compiler()");
  }
  // Keyed by the bytes' content hash: the G entries of a grouped program
  // link one object, whether they share one buffer (fresh from the
  // compiler) or each brought its own copy (read from the artifact cache).
  const Hash128 program = hash128(*artifact.binary);
  std::shared_ptr<CodeModule> module;
  {
    std::lock_guard lock(modules_mutex_);
    for (auto it = modules_.begin(); it != modules_.end();) {
      it = it->second.expired() ? modules_.erase(it) : std::next(it);
    }
    if (auto it = modules_.find(program); it != modules_.end()) module = it->second.lock();
    if (!module) {
      auto linked = link(artifact, label);
      if (!linked) return linked.error();
      module = std::move(*linked);
      modules_[program] = module;
      modules_loaded_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  auto entry = module->lookup(artifact.lowered_name);
  if (!entry) return entry.error();
  // The signature symbol sits beside its entry: "kiln_entry_3" -> "kiln_signature_3".
  std::string sig_name = artifact.lowered_name;
  if (sig_name.rfind("kiln_entry_", 0) == 0) sig_name.replace(0, 11, "kiln_signature_");
  auto signature = module->lookup(sig_name);
  if (!signature) return signature.error();

  auto state = std::make_unique<CpuKernelState>();
  state->owner = this;
  state->module = std::move(module);
  state->entry = reinterpret_cast<EntryFn>(*entry);
  std::memcpy(&state->signature, *signature, sizeof(Signature));
  return LoadedKernel(std::move(state), artifact.entry, config);
}

Result<std::shared_ptr<CodeModule>> CpuDevice::link(const Artifact& artifact,
                                                    const std::string& label) {
  if (artifact.format == BinaryFormat::kCpuSharedObject)
    return load_shared_object(*artifact.binary, label);
  // An object of an older cache or of a caller's own compiler: LLVM's JIT.
  auto toolchain = toolchain_();
  if (!toolchain) return toolchain.error();
  return (*toolchain)->link_object(*artifact.binary, label);
}

Status CpuDevice::launch(const LoadedKernel& kernel, const LaunchConfig& config,
                         const KernelArgs& args) {
  const auto& k = kernel.state_for<CpuKernelState>(*this, "kernel");
  const std::string expected = signature_text(k.signature);
  if (args.size() != k.signature.count) {
    return launch_error(kernel, config,
                        std::to_string(args.size()) + " arguments " + args.signature() +
                            " given; the kernel takes " + std::to_string(k.signature.count) + " " +
                            expected,
                        ErrorCode::kInvalidArgument);
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (static_cast<unsigned char>(args.type(i)) != k.signature.types[i]) {
      return launch_error(kernel, config,
                          "argument " + std::to_string(i) + " is " + arg_type_name(args.type(i)) +
                              "; the kernel takes " + expected,
                          ErrorCode::kInvalidArgument);
    }
  }
  if (config.grid.count() == 0 || config.block.count() == 0) {
    return launch_error(kernel, config, "empty grid or block", ErrorCode::kInvalidArgument);
  }
  if (config.shared_bytes > kSharedLimit) {
    return launch_error(kernel, config,
                        "asks for more dynamic shared memory than a CPU block has (" +
                            std::to_string(kSharedLimit) + " bytes)",
                        ErrorCode::kInvalidArgument);
  }
  // A captured launch copies what it needs: the caller's args and config
  // may be gone when the graph replays. The kernel's module must outlive
  // the graph, as on CUDA.
  if (!capturing(config.stream)) return run_blocks(k, config, args);  // no copies on the hot path
  const CpuKernelState* state = &k;
  return submit(config.stream,
                [this, state, config, args] { return run_blocks(*state, config, args); });
}

Status CpuDevice::run_blocks(const CpuKernelState& kernel, const LaunchConfig& config,
                             const KernelArgs& args) {
  const std::vector<void*> params = args.param_pointers();
  const Dim3 g = config.grid;
  pool_.run(g.count(), [&](std::uint64_t block, int runner) {
    auto& scratch = shared_[static_cast<std::size_t>(runner)];
    if (scratch.size() < config.shared_bytes) scratch.resize(config.shared_bytes);
    BlockContext ctx{};
    ctx.block_idx = {static_cast<unsigned>(block % g.x), static_cast<unsigned>(block / g.x % g.y),
                     static_cast<unsigned>(block / (std::uint64_t{g.x} * g.y))};
    ctx.grid_dim = {g.x, g.y, g.z};
    ctx.block_dim = {config.block.x, config.block.y, config.block.z};
    ctx.shared = config.shared_bytes ? scratch.data() : nullptr;
    ctx.shared_bytes = config.shared_bytes;
    kernel.entry(&ctx, params.data());
  });
  return ok_status();
}

// ----------------------------------------------------------------- memory

Result<Buffer> CpuDevice::allocate(std::size_t bytes) {
  // More than the machine has would fail, or (memory overcommitted) succeed
  // and get the process killed when it is touched: refuse it as a value.
  if ((props_.total_memory && bytes > props_.total_memory) || bytes > SIZE_MAX - 63) {
    return make_error(ErrorCode::kUnavailable, "cannot allocate " + std::to_string(bytes) +
                                                   " bytes of host memory: the "
                                                   "machine has " +
                                                   std::to_string(props_.total_memory) + " bytes");
  }
  auto state = std::make_unique<BufferState>();
  state->owner = this;
  // 64-byte lines, so vector loads of a tile never straddle two.
  std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64;
  state->data = std::aligned_alloc(64, rounded);
  if (!state->data) {
    return make_error(ErrorCode::kUnavailable, "cannot allocate " + std::to_string(bytes) +
                                                   " bytes of host memory (" +
                                                   std::strerror(errno) + ")");
  }
  void* data = state->data;
  return Buffer(std::move(state), data, bytes);
}

Status CpuDevice::copy_to_device(void* dst, const void* host_src, std::size_t bytes,
                                 Stream* stream) {
  return copy(dst, host_src, bytes, stream);
}

Status CpuDevice::copy_to_host(void* host_dst, const void* src, std::size_t bytes, Stream* stream) {
  return copy(host_dst, src, bytes, stream);
}

Status CpuDevice::copy(void* dst, const void* src, std::size_t bytes, Stream* stream) {
  return submit(stream, [=] {
    std::memmove(dst, src, bytes);
    return ok_status();
  });
}

Status CpuDevice::fill(void* dst, std::uint8_t byte, std::size_t bytes, Stream* stream) {
  return submit(stream, [=] {
    std::memset(dst, byte, bytes);
    return ok_status();
  });
}

// ------------------------------------------------ streams, events, graphs

bool CpuDevice::capturing(Stream* stream) const {
  return stream && stream->state_for<StreamState>(*this, "stream").capturing;
}

Status CpuDevice::submit(Stream* stream, Work work) {
  if (capturing(stream)) {
    stream->state_for<StreamState>(*this, "stream").captured.push_back(std::move(work));
    return ok_status();
  }
  return work();
}

Result<Stream> CpuDevice::create_stream() {
  auto state = std::make_unique<StreamState>();
  state->owner = this;
  return Stream(std::move(state));
}

Result<Event> CpuDevice::create_event() {
  auto state = std::make_unique<EventState>();
  state->owner = this;
  return Event(std::move(state));
}

Status CpuDevice::record(Event& event, Stream* stream) {
  auto& e = event.state_for<EventState>(*this, "event");
  if (capturing(stream)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the CPU device cannot record an event inside a stream capture: record "
                      "around the graph's replay instead");
  }
  // Work before this point has finished: launches are synchronous.
  e.time = std::chrono::steady_clock::now();
  e.recorded = true;
  return ok_status();
}

Result<float> CpuDevice::elapsed_ms(const Event& start, const Event& stop) {
  auto& a = start.state_for<EventState>(*this, "start event");
  auto& b = stop.state_for<EventState>(*this, "stop event");
  if (!a.recorded || !b.recorded) {
    return make_error(ErrorCode::kInvalidArgument,
                      "elapsed_ms needs two recorded events: call record() on both first");
  }
  return std::chrono::duration<float, std::milli>(b.time - a.time).count();
}

Status CpuDevice::synchronize(Stream*) {
  return ok_status();  // every operation has finished when it returns
}

Status CpuDevice::begin_capture(Stream& stream) {
  auto& s = stream.state_for<StreamState>(*this, "stream");
  if (s.capturing) {
    return make_error(ErrorCode::kInvalidArgument, "the stream is already capturing");
  }
  s.capturing = true;
  s.captured.clear();
  return ok_status();
}

Result<Graph> CpuDevice::end_capture(Stream& stream) {
  auto& s = stream.state_for<StreamState>(*this, "stream");
  if (!s.capturing) {
    return make_error(ErrorCode::kInvalidArgument,
                      "end_capture on a stream that is not capturing: call begin_capture first");
  }
  s.capturing = false;
  auto state = std::make_unique<GraphState>();
  state->owner = this;
  state->work = std::move(s.captured);
  s.captured.clear();
  return Graph(std::move(state));
}

Status CpuDevice::replay(const Graph& graph, Stream* stream) {
  auto& g = graph.state_for<GraphState>(*this, "graph");
  return submit(stream, [&g] {
    for (const auto& work : g.work) {
      if (auto s = work(); !s) return s;
    }
    return ok_status();
  });
}

// ------------------------------------------------------- tuner's tools

Status CpuDevice::flush_caches(std::span<const DeviceSpan> touched, Stream* stream) {
  if (cache_flush_instruction().empty()) {
    return make_error(ErrorCode::kUnavailable,
                      "a cold-cache flush on the CPU needs a cache-line flush instruction "
                      "(clflush, x86-64) and this CPU has none: measure without cold_l2");
  }
  // NOTES: flushing on this thread is enough though the blocks run on the
  // pool's workers: CLFLUSH/CLFLUSHOPT invalidate the line throughout the
  // cache coherence domain, every core's L1 and L2 as well as the shared
  // last level, writing it back first when dirty.
  if (!capturing(stream)) {
    flush_lines(touched);  // no copy and no allocation on the timing path
    return ok_status();
  }
  // The caller's list may be gone when the graph replays.
  return submit(stream, [spans = std::vector<DeviceSpan>(touched.begin(), touched.end())] {
    flush_lines(spans);
    return ok_status();
  });
}

Status CpuDevice::delay(double microseconds, Stream* stream) {
  // Launches here are synchronous, so host overhead never overlaps a
  // kernel; the delay only keeps its meaning (the stream is busy so long).
  return submit(stream, [microseconds] {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(microseconds);
    while (std::chrono::steady_clock::now() < until) {
    }
    return ok_status();
  });
}

// ----------------------------------------------------------------- factory

Result<std::unique_ptr<Device>> open_host_device(int threads, ToolchainSource toolchain) {
  auto host = host_cpu(toolchain);
  if (!host) return host.error();
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::unique_ptr<Device>(new CpuDevice(threads, *host, toolchain));
}

std::uint64_t modules_loaded(const Device& device) {
  const auto* cpu = dynamic_cast<const CpuDevice*>(&device);
  return cpu ? cpu->modules_loaded() : 0;
}

}  // namespace kiln::cpu
