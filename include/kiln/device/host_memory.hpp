// A device whose memory is the host's (the replay, a test's toy backend):
// allocation on the heap, copies and fills as memcpy and memset, so such a
// backend writes only what is its own (loading, launching, timing).
#pragma once

#include <cstring>
#include <memory>

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

 private:
  struct Block final : detail::HandleState {
    explicit Block(std::size_t n) : bytes(new unsigned char[n ? n : 1]) {}
    std::unique_ptr<unsigned char[]> bytes;
  };
};

}  // namespace kiln
