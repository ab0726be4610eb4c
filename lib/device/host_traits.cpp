// host_cpu_traits(): the host CPU as config spaces' device constraints see it.
#include <cstdlib>
#include <fstream>
#include <string>

#include "kiln/device/device.hpp"

namespace kiln {

namespace {

std::string read_word(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  in >> word;
  return word;
}

// "48K", "2048K", "260M" as sysfs writes cache sizes; 0 when unreadable.
std::size_t size_text(const std::string& text) {
  if (text.empty()) return 0;
  std::size_t scale = 1;
  if (text.back() == 'K') scale = std::size_t{1} << 10;
  if (text.back() == 'M') scale = std::size_t{1} << 20;
  return std::strtoull(text.c_str(), nullptr, 10) * scale;
}

}  // namespace

DeviceTraits host_cpu_traits(int cores) {
  DeviceTraits t;
  // The compiler targets -march=native, so what this CPU supports is what
  // kernels get. NOTES: AVX-512 doubles both the width and the register file.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    t.name = "avx512";
    t.vector_bits = 512;
    t.vector_registers = 32;
  } else if (__builtin_cpu_supports("avx2") || __builtin_cpu_supports("avx")) {
    t.name = __builtin_cpu_supports("avx2") ? "avx2" : "avx";
    t.vector_bits = 256;
    t.vector_registers = 16;
  } else {
    t.name = "sse";
    t.vector_bits = 128;
    t.vector_registers = 16;
  }
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string level = read_word(dir + "/level"), type = read_word(dir + "/type");
    const std::size_t bytes = size_text(read_word(dir + "/size"));
    if (level == "1" && type == "Data") t.l1d_bytes = bytes;
    if (level == "2") t.l2_bytes = bytes;
    if (level == "3") t.l3_bytes = bytes;
  }
  t.shared_per_block = std::size_t{1} << 20;  // the CPU device's block scratch (cpu_device.cpp)
  t.cores = cores;
  return t;
}

}  // namespace kiln
