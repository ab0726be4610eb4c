// CpuDevice: kiln::Device on the host. Memory is host memory; a launch calls
// the compiled entry once per block of the grid on the BlockPool and returns
// when all blocks are done, so every stream is trivially in order and an
// event's time is the host clock when it is recorded. A capturing stream
// records its work instead of running it; a Graph replays that record.
// No LLVM here: a shared object (kCpuSharedObject) is dlopen'ed, and only
// a relocatable object (kCpuObject) asks the toolchain source for its JIT.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "block_pool.hpp"
#include "cpu_abi.hpp"
#include "cpu_runtime.hpp"
#include "kiln/core/hash.hpp"
#include "kiln/device/device.hpp"

namespace kiln::cpu {

struct CpuKernelState : detail::HandleState {
  std::shared_ptr<CodeModule> module;  // keeps the code linked
  EntryFn entry = nullptr;
  Signature signature{};
};

class CpuDevice final : public Device {
 public:
  CpuDevice(int threads, const HostCpu& host, ToolchainSource toolchain);
  ~CpuDevice() override;

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
  // Work here is synchronous and in order: a caller's stream is any stream.
  Result<Stream> wrap_stream(std::uintptr_t /*native*/) override { return create_stream(); }
  Result<Event> create_event() override;
  Status record(Event& event, Stream* stream) override;
  Result<float> elapsed_ms(const Event& start, const Event& stop) override;
  Status synchronize(Stream* stream) override;

  Status begin_capture(Stream& stream) override;
  Result<Graph> end_capture(Stream& stream) override;
  Status replay(const Graph& graph, Stream* stream) override;

  Status flush_caches(std::span<const DeviceSpan> touched, Stream* stream) override;
  Status delay(double microseconds, Stream* stream) override;

  // Objects linked so far (kiln::cpu::modules_loaded).
  std::uint64_t modules_loaded() const { return modules_loaded_.load(); }

 private:
  using Work = std::function<Status()>;
  bool capturing(Stream* stream) const;
  // Runs `work` now, or appends it to the capture of `stream`.
  Status submit(Stream* stream, Work work);
  // The code of `artifact`: dlopen'ed, or linked by the toolchain's JIT.
  Result<std::shared_ptr<CodeModule>> link(const Artifact& artifact, const std::string& label);
  Status run_blocks(const CpuKernelState& kernel, const LaunchConfig& config,
                    const KernelArgs& args);

  DeviceProperties props_;
  ToolchainSource toolchain_;
  BlockPool pool_;
  // Per runner: the blocks' dynamic shared memory.
  std::vector<std::vector<unsigned char>> shared_;

  std::mutex modules_mutex_;
  // Keyed by the content hash of the object's bytes: one link per distinct
  // program, however many entries (and copies of the bytes) name it.
  std::map<Hash128, std::weak_ptr<CodeModule>> modules_;
  std::atomic<std::uint64_t> modules_loaded_{0};
};

}  // namespace kiln::cpu
