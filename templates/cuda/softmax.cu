// Kiln's shipped row softmax for CUDA: y[r] = softmax(x[r]) over the last
// dimension, x and y [rows, cols] in fp16 or bf16, computed in fp32 (the
// row maximum is subtracted first, so large logits do not overflow).
//
// THREADS threads own a row, ROWS rows share a block (block = THREADS x
// ROWS), and each thread moves VEC elements per access. Launch: grid =
// ceil(rows / ROWS); cols must be a multiple of VEC (aligned vectors).
#include "kiln_row_common.cuh"

namespace kiln {

template <class T, int THREADS, int VEC, int ROWS>
__global__ void __launch_bounds__(THREADS* ROWS)
    softmax(const T* __restrict__ x, T* __restrict__ y, int rows, int cols) {
  using V = rowk::Vec<T, VEC>;
  __shared__ float scratch[ROWS * THREADS / 32];
  const int row = blockIdx.x * ROWS + threadIdx.y;
  const bool active = row < rows;  // no early return: the reductions synchronise
  const int nvec = cols / VEC;
  const size_t base = static_cast<size_t>(active ? row : 0) * cols;
  const V* xr = reinterpret_cast<const V*>(x + base);
  V* yr = reinterpret_cast<V*>(y + base);

  float m = __int_as_float(0xff800000);  // -inf
  if (active) {
    for (int i = threadIdx.x; i < nvec; i += THREADS) {
      const V a = xr[i];
#pragma unroll
      for (int k = 0; k < VEC; ++k) m = fmaxf(m, rowk::to_f(a.v[k]));
    }
  }
  m = rowk::row_reduce<THREADS>(m, scratch, rowk::Max());
  float sum = 0.f;
  if (active) {
    for (int i = threadIdx.x; i < nvec; i += THREADS) {
      const V a = xr[i];
#pragma unroll
      for (int k = 0; k < VEC; ++k) sum += __expf(rowk::to_f(a.v[k]) - m);
    }
  }
  const float inv = 1.f / rowk::row_reduce<THREADS>(sum, scratch, rowk::Sum());
  if (!active) return;
  for (int i = threadIdx.x; i < nvec; i += THREADS) {
    const V a = xr[i];
    V o;
#pragma unroll
    for (int k = 0; k < VEC; ++k) o.v[k] = rowk::from_f<T>(__expf(rowk::to_f(a.v[k]) - m) * inv);
    yr[i] = o;
  }
}

}  // namespace kiln
