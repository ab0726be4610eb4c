// Who may touch LLVM's process-wide state. LLD, linking in this process,
// rewrites it: its ELF driver resets every cl::opt to its default
// (cl::ResetAllOptionOccurrences) and registers every target's factories
// again (InitializeAllTargetMCs and the rest), while a compile on another
// thread reads those same globals in its pass pipeline and code generator.
// TSan caught the reset racing StandardInstrumentations::registerCallbacks
// in a tuning run with two compile threads. So every in-process use of
// LLVM holds the lock shared, and a link holds it alone.
#pragma once

#include <mutex>
#include <shared_mutex>

namespace kiln::cpu {

// Held for a compile, a JIT load or lookup, a question to LLVM about the
// host. Many at once. Never call link_shared_object while holding it (the
// link waits for every holder: the thread would wait for itself).
std::shared_lock<std::shared_mutex> llvm_in_use();

// Held for an LLD link: no LLVM use anywhere else in the process meanwhile.
std::unique_lock<std::shared_mutex> llvm_rewritten();

}  // namespace kiln::cpu
