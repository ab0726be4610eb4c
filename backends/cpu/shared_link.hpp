// Links a compiled object into a shared object with LLD as a library: the
// stored form of a CPU kernel, loaded later with dlopen and no LLVM
// (runtime/shared_object.cpp). In process, so a machine with no `ld`
// still links.
#pragma once

#include <string>

#include "kiln/core/error.hpp"

namespace kiln::cpu {

// The shared object of `object` (a -fPIC ELF relocatable), its undefined
// symbols (libc, libm) left to the loader; `label` names it in errors.
// Thread-safe: one link at a time, and none while any thread holds
// llvm_in_use() (llvm_lock.hpp), so never call it holding that.
Result<std::string> link_shared_object(const std::string& object, const std::string& label);

}  // namespace kiln::cpu
