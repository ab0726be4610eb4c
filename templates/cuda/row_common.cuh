// Shared by the row kernels (fused_add_rmsnorm.cu, softmax.cu): fp16/bf16
// storage converted to fp32 for arithmetic, vectors of VEC elements moved
// in one load or store, and a reduction over the THREADS threads that own
// one row (a block holds ROWS such rows: threadIdx.y picks the row).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace kiln::rowk {

__device__ __forceinline__ float to_f(__half v) {
  return __half2float(v);
}
__device__ __forceinline__ float to_f(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <class T>
__device__ __forceinline__ T from_f(float v);
template <>
__device__ __forceinline__ __half from_f<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// VEC elements in one aligned access (VEC * 2 bytes: up to 16).
template <class T, int VEC>
struct alignas(sizeof(T) * VEC) Vec {
  T v[VEC];
};

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Reduces `v` over the THREADS threads of this thread's row; every one of
// them gets the result. `scratch` holds ROWS * THREADS/32 floats; every
// thread of the block must call (it synchronises).
template <int THREADS, class Op>
__device__ __forceinline__ float row_reduce(float v, float* scratch, Op op) {
  static_assert(THREADS % 32 == 0, "a row is whole warps");
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  constexpr int kWarps = THREADS / 32;
  float* mine = scratch + threadIdx.y * kWarps;
  __syncthreads();  // the previous reduction's readers are done
  if (threadIdx.x % 32 == 0) mine[threadIdx.x / 32] = v;
  __syncthreads();
  float r = mine[0];
  for (int w = 1; w < kWarps; ++w) r = op(r, mine[w]);
  return r;
}

}  // namespace kiln::rowk
