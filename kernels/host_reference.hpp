// Host code computing what the shipped kernels must produce, in double
// precision, independent of any config: the reference `kiln tune` checks
// every config against. Each reads its inputs from the device and writes
// the expected outputs back into the output arguments.
#pragma once

#include "kiln/device/device.hpp"
#include "kiln/tuner/args.hpp"

namespace kiln::internal {

// The integer scalar argument `name` (a shape dimension), widened. Throws
// kiln::Error naming it when it is absent or not an integer.
std::int64_t int_scalar(const ArgList& args, const char* name);
// A tensor argument's elements, widened to double.
Result<std::vector<double>> read_tensor(Device& device, const Arg& arg);
// `values` written into a tensor argument in its own dtype (f32, f16, bf16).
Status write_tensor(Device& device, const Arg& arg, const std::vector<double>& values);
// `v` rounded to what `dtype` can hold, as a kernel storing it would.
double round_to_storage(DType dtype, double v);

// C[M,N] = A[M,K] * B[K,N]; A and B f32, f16 or bf16, C f32 (args A, B, C, M, N, K).
Status gemm_reference(Device& device, const ArgList& args);

// residual += x; x = residual * rsqrt(mean(residual^2) + eps) * weight, per row
// (args x, residual, weight, rows, hidden, eps), the sum rounded to the
// storage type (f32, f16 or bf16) as the kernels store it.
Status fused_add_rmsnorm_reference(Device& device, const ArgList& args);

// y = softmax(x) per row (args x, y, rows, cols; f32, f16 or bf16).
Status softmax_reference(Device& device, const ArgList& args);

}  // namespace kiln::internal
