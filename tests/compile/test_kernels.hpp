// Small kernels and binary checks shared by the compile tests. Tiny on
// purpose: the suite compiles dozens of programs on 2 cores.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "kiln/compile/compile_engine.hpp"
#include "kiln/compile/kernel.hpp"

namespace kiln::test {

// scale<N>: N in {1..7, 13}; N == 13 trips a static_assert, so a group of all
// eight has exactly one broken specialization.
inline KernelTemplate scale_kernel() {
  KernelTemplate t;
  t.name = "scale";
  t.source = R"(
template <int N>
__global__ void scale(float* x) {
  static_assert(N != 13, "kiln-test: N must not be 13");
  x[threadIdx.x] *= static_cast<float>(N);
}
)";
  t.entry = "scale<{N}>";
  t.space.param("N", {1, 2, 3, 4, 5, 6, 7, 13});
  return t;
}

// A specialization whose failure the log cannot attribute (the entry names
// no template at all): only splitting finds it.
inline Specialization unattributable(const std::string& kernel) {
  Specialization s;
  s.kernel = kernel;
  s.config = Config{{"N", std::int64_t{99}}};
  s.entry = "no_such_kernel<99>";
  return s;
}

// A one-specialization unit of `t` for config N=n.
inline CompileUnit single_unit(const KernelTemplate& t, std::int64_t n,
                               const std::string& arch = "sm_80") {
  return group(t, {t.specialize(Config{{"N", n}})}, GroupOptions{1, arch, BinaryFormat::kCubin})
      .at(0);
}

struct ElfInfo {
  bool elf64 = false;
  std::uint16_t machine = 0;
  std::uint32_t flags = 0;
  int sm = 0;  // the SM number the flags encode (80, 90, ...)
};

// The header fields the driver checks before loading a CUBIN.
inline ElfInfo elf_info(const std::string& bytes) {
  ElfInfo info;
  if (bytes.size() < 64 || bytes.compare(0, 4,
                                         "\x7f"
                                         "ELF") != 0)
    return info;
  info.elf64 = bytes[4] == 2;
  std::memcpy(&info.machine, bytes.data() + 18, 2);
  std::memcpy(&info.flags, bytes.data() + 48, 4);
  const int abi_version = static_cast<unsigned char>(bytes[8]);
  // CUDA ELF ABI 8 (CUDA 12.8+) moved the SM into bits 8-15.
  info.sm = abi_version >= 8 ? static_cast<int>((info.flags >> 8) & 0xff)
                             : static_cast<int>(info.flags & 0xff);
  return info;
}

inline constexpr std::uint16_t kEmCuda = 190;

}  // namespace kiln::test
