// Kiln's shipped in-place fused-add RMSNorm for CUDA, as transformer
// inference runs it between layers:
//   residual[r] += x[r];  x[r] = residual[r] / rms(residual[r]) * weight
// x and residual are [rows, hidden], weight [hidden], all fp16 or bf16; the
// sum is rounded to the storage type (as a separate add would) and the mean
// of squares is accumulated in fp32.
//
// THREADS threads own a row, ROWS rows share a block (block = THREADS x
// ROWS), and each thread moves VEC elements per access. Launch: grid =
// ceil(rows / ROWS); hidden must be a multiple of VEC (aligned vectors).
#include "kiln_row_common.cuh"

namespace kiln {

template <class T, int THREADS, int VEC, int ROWS>
__global__ void __launch_bounds__(THREADS* ROWS)
    fused_add_rmsnorm(T* __restrict__ x, T* __restrict__ residual, const T* __restrict__ weight,
                      int rows, int hidden, float eps) {
  using V = rowk::Vec<T, VEC>;
  __shared__ float scratch[ROWS * THREADS / 32];
  const int row = blockIdx.x * ROWS + threadIdx.y;
  const bool active = row < rows;  // no early return: the reduction synchronises
  const int nvec = hidden / VEC;
  V* xr = reinterpret_cast<V*>(x + static_cast<size_t>(active ? row : 0) * hidden);
  V* rr = reinterpret_cast<V*>(residual + static_cast<size_t>(active ? row : 0) * hidden);
  const V* wr = reinterpret_cast<const V*>(weight);

  float sum = 0.f;
  if (active) {
    for (int i = threadIdx.x; i < nvec; i += THREADS) {
      V a = xr[i], r = rr[i];
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        r.v[k] = rowk::from_f<T>(rowk::to_f(r.v[k]) + rowk::to_f(a.v[k]));
        const float s = rowk::to_f(r.v[k]);
        sum += s * s;
      }
      rr[i] = r;
    }
  }
  const float total = rowk::row_reduce<THREADS>(sum, scratch, rowk::Sum());
  const float scale = rsqrtf(total / static_cast<float>(hidden) + eps);
  if (!active) return;
  for (int i = threadIdx.x; i < nvec; i += THREADS) {
    const V r = rr[i], w = wr[i];
    V o;
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      o.v[k] = rowk::from_f<T>(rowk::to_f(r.v[k]) * scale * rowk::to_f(w.v[k]));
    xr[i] = o;
  }
}

}  // namespace kiln
