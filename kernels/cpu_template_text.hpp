// The shipped CPU GEMM's one-line description, shared by its template
// (cpu_templates.cpp) and the kernel registry (shipped_kernels.cpp), which
// lists it at every `kiln` start: building the template to read it meant
// reading the host's cache sizes from sysfs and binding a large space to
// them, a third of `kiln --help`'s own time.
#pragma once

namespace kiln::cpu {

inline constexpr const char* kGemmF32Description =
    "packed fp32 GEMM for the CPU: MR x NR register micro-tile, MC/NC/KC cache "
    "blocks, GM row chunks x N/NC column panels";

}  // namespace kiln::cpu
