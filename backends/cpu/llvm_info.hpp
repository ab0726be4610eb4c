// The LLVM this Kiln was built against and the host it targets (only built
// with KILN_HAVE_LLVM).
#pragma once

#include <string>

#include "kiln/backends/toolchain.hpp"

namespace kiln::cpu {

ComponentStatus probe_llvm();

// The host CPU as LLVM names it ("znver3", "sapphirerapids").
std::string host_cpu_name();
// The process's target triple, "x86_64-pc-linux-gnu".
std::string host_triple();
// XXH3-128 hex of the host's enabled CPU features, sorted: two hosts with
// the same CPU name but different features (a VM masking AVX-512) must not
// share object code.
const std::string& host_features_hash();
// Registers the native target, its asm printer and parser, once per process
// (thread-safe). Must run before any TargetMachine or LLJIT is made.
void ensure_native_target();

}  // namespace kiln::cpu
