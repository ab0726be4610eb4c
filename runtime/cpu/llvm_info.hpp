// The LLVM this Kiln was built against (only built with KILN_HAVE_LLVM).
#pragma once

#include "kiln/toolchain.hpp"

namespace kiln::cpu {

ComponentStatus probe_llvm();

}  // namespace kiln::cpu
