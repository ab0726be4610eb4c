// DeviceTraits: what a config space's constraints may know about the device
// a kernel will run on (vector width, register file, caches, shared memory),
// so one space is right on an AVX2 laptop, an AVX-512 server or a GPU alike.
// Backends fill it (kiln::cpu::host_traits(), DeviceProperties::traits);
// tests fabricate it to check a space for a machine they do not run on.
#pragma once

#include <cstddef>
#include <string>

namespace kiln {

struct DeviceTraits {
  std::string name;                  // "avx512", "avx2", "sm_90": a short label for messages
  int vector_bits = 128;             // widest SIMD register a kernel may use (CPU); 0 when none
  int vector_registers = 16;         // architectural SIMD registers (16 on AVX2, 32 on AVX-512)
  std::size_t l1d_bytes = 0;         // per-core L1 data cache (0: unknown)
  std::size_t l2_bytes = 0;          // per-core L2 (on CUDA, the device's L2)
  std::size_t l3_bytes = 0;          // shared last level (0: none or unknown)
  std::size_t shared_per_block = 0;  // scratch / shared memory one block may ask for
  int registers_per_thread = 0;      // GPU: the most 32-bit registers a thread may use
  int cores = 0;                     // CPU worker threads; GPU multiprocessors

  // Floats in one vector register (vector_bits / 32, at least 1).
  int vector_floats() const { return vector_bits >= 32 ? vector_bits / 32 : 1; }
  // Every field, e.g. "avx512: 512-bit x32 vregs, L1d 48KiB, L2 2MiB, L3 260MiB,
  // shared 1MiB": what a space bound to this device hashes and prints.
  std::string summary() const;
};

}  // namespace kiln
