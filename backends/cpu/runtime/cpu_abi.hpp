// The calling convention between the CPU device and the code the Clang
// compiler generates. The structs here must mirror, byte for byte, the ones
// the prelude (clang_prelude.cpp) gives the kernel source; the type codes
// mirror kiln::ArgType.
#pragma once

#include <cstdint>

#include "kiln/device/device.hpp"

namespace kiln::cpu {

struct AbiDim3 {
  unsigned x, y, z;
};

// What a CPU kernel sees for one block.
struct BlockContext {
  AbiDim3 block_idx;
  AbiDim3 grid_dim;
  AbiDim3 block_dim;
  void* shared;                // this block's dynamic shared memory (per worker)
  unsigned long shared_bytes;  // NOLINT(runtime/int): mirrors the prelude
};

// The parameter types of a compiled entry after its BlockContext: count,
// then one kiln::ArgType code each.
struct Signature {
  unsigned char count;
  unsigned char types[63];
};
inline constexpr unsigned kMaxArgs = 63;

// extern "C" void kiln_entry_<i>(const BlockContext*, void* const* args):
// args[j] is the address of argument j's value.
using EntryFn = void (*)(const BlockContext*, void* const*);

static_assert(static_cast<int>(ArgType::kPointer) == 0 && static_cast<int>(ArgType::kF64) == 7,
              "the prelude's ArgCode values mirror kiln::ArgType");

}  // namespace kiln::cpu
