#include "kiln/core/device_traits.hpp"

namespace kiln {

namespace {

std::string bytes_text(std::size_t bytes) {
  if (bytes == 0) return "?";
  if (bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + "MiB";
  if (bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes) + "B";
}

}  // namespace

std::string DeviceTraits::summary() const {
  std::string out = (name.empty() ? std::string("device") : name) + ": " +
                    std::to_string(vector_bits) + "-bit x" + std::to_string(vector_registers) +
                    " vregs, L1d " + bytes_text(l1d_bytes) + ", L2 " + bytes_text(l2_bytes) +
                    ", L3 " + bytes_text(l3_bytes) + ", shared " + bytes_text(shared_per_block);
  if (registers_per_thread) out += ", " + std::to_string(registers_per_thread) + " regs/thread";
  if (cores) out += ", " + std::to_string(cores) + " cores";
  return out;
}

}  // namespace kiln
