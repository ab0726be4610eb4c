// Fused residual add + RMSNorm for the Kiln CPU backend, in place. For each
// row r of a [rows, hidden] pair of tensors:
//   residual[r] += x[r]
//   x[r] = residual[r] / sqrt(mean(residual[r]^2) + eps) * weight
// One block normalises ROWS consecutive rows: launch it with grid
// (ceil(rows/ROWS), 1, 1). VEC independent partial sums break the
// reduction's dependency chain so it vectorises (the order of additions,
// hence the last bits of the result, depends on VEC).
#include "kiln/cpu_kernel.h"

namespace kiln_cpu {

template <int ROWS, int VEC>
void fused_add_rmsnorm(const kiln::cpu::BlockContext& ctx, float* x, float* residual,
                       const float* weight, int rows, int hidden, float eps) {
  const int first = static_cast<int>(ctx.block_idx.x) * ROWS;
  const int last = rows < first + ROWS ? rows : first + ROWS;
  for (int r = first; r < last; ++r) {
    float* xr = x + static_cast<long>(r) * hidden;
    float* rr = residual + static_cast<long>(r) * hidden;
    float partial[VEC];
    for (int v = 0; v < VEC; ++v) partial[v] = 0.0f;
    int i = 0;
    for (; i + VEC <= hidden; i += VEC) {
      for (int v = 0; v < VEC; ++v) {
        const float s = xr[i + v] + rr[i + v];
        rr[i + v] = s;
        partial[v] += s * s;
      }
    }
    for (; i < hidden; ++i) {
      const float s = xr[i] + rr[i];
      rr[i] = s;
      partial[0] += s * s;
    }
    float sum = 0.0f;
    for (int v = 0; v < VEC; ++v) sum += partial[v];
    const float scale = 1.0f / __builtin_sqrtf(sum / static_cast<float>(hidden) + eps);
    for (int j = 0; j < hidden; ++j) xr[j] = rr[j] * scale * weight[j];
  }
}

}  // namespace kiln_cpu
