// Host code computing what the shipped kernels must produce, in double
// precision, independent of any config: the reference `kiln tune` checks
// every config against. Each reads its inputs from the device and writes
// the expected outputs back into the output arguments.
#pragma once

#include "kiln/args.hpp"
#include "kiln/device.hpp"

namespace kiln::internal {

// The integer scalar argument `name` (a shape dimension), widened. Throws
// kiln::Error naming it when it is absent or not an integer.
std::int64_t int_scalar(const ArgList& args, const char* name);

// C[M,N] = A[M,K] * B[K,N]; A and B f32, f16 or bf16, C f32 (args A, B, C, M, N, K).
Status gemm_reference(Device& device, const ArgList& args);

// residual += x; x = residual * rsqrt(mean(residual^2) + eps) * weight, per row
// (args x, residual, weight, rows, hidden, eps).
Status fused_add_rmsnorm_reference(Device& device, const ArgList& args);

}  // namespace kiln::internal
