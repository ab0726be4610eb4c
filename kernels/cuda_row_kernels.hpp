// The shipped CUDA row kernels (templates/cuda/fused_add_rmsnorm.cu and
// softmax.cu, fp16 and bf16): their templates with config spaces, launch
// rules, host references, and their entries in the shipped-kernel registry.
#pragma once

#include <vector>

#include "kiln/kernels/shipped_kernels.hpp"

namespace kiln::internal {

// THREADS per row x ROWS per block (at most 1024 threads) x VEC elements
// per access; default THREADS=256, VEC=8, ROWS=1 (a 4096-wide row in two
// passes of 16-byte loads).
KernelTemplate cuda_rmsnorm_template(DType dtype);
KernelTemplate cuda_softmax_template(DType dtype);

// fused_add_rmsnorm_f16/_bf16 and softmax_f16/_bf16, for build_registry().
std::vector<ShippedKernel> cuda_row_kernels();

}  // namespace kiln::internal
