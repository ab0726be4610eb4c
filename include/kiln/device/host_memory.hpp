// A device whose memory is the host's and whose work is done when a call
// returns (the replay, a test's toy backend): allocation on the heap,
// copies and fills as memcpy and memset, nothing to synchronise, flush or
// delay, and no graphs. Such a backend writes only what is its own:
// loading, launching, streams and events.
#pragma once

#include <cstring>
#include <memory>
#include <span>

#include "kiln/device/device.hpp"

namespace kiln {

class HostMemoryDevice : public Device {
 public:
  Result<Buffer> allocate(std::size_t bytes) override {
    auto block = std::make_unique<Block>(bytes);
    block->owner = this;
    void* data = block->bytes.get();
    return Buffer(std::move(block), data, bytes);
  }
  Status copy_to_device(void* dst, const void* src, std::size_t n, Stream*) override {
    return copy(dst, src, n, nullptr);
  }
  Status copy_to_host(void* dst, const void* src, std::size_t n, Stream*) override {
    return copy(dst, src, n, nullptr);
  }
  Status copy(void* dst, const void* src, std::size_t n, Stream*) override {
    if (n) std::memmove(dst, src, n);
    return ok_status();
  }
  Status fill(void* dst, std::uint8_t byte, std::size_t n, Stream*) override {
    if (n) std::memset(dst, byte, n);
    return ok_status();
  }
  Status synchronize(Stream*) override { return ok_status(); }
  Status flush_caches(std::span<const DeviceSpan>, Stream*) override { return ok_status(); }
  Status delay(double, Stream*) override { return ok_status(); }
  Status begin_capture(Stream&) override { return no_graphs(); }
  Result<Graph> end_capture(Stream&) override { return no_graphs(); }
  Status replay(const Graph&, Stream*) override { return no_graphs(); }

 private:
  ErrorInfo no_graphs() const {
    return make_error(ErrorCode::kUnavailable, properties().name + " captures no graphs");
  }
  struct Block final : detail::HandleState {
    explicit Block(std::size_t n) : bytes(new unsigned char[n ? n : 1]) {}
    std::unique_ptr<unsigned char[]> bytes;
  };
};

}  // namespace kiln
