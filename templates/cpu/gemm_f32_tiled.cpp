// Tiled fp32 GEMM for the Kiln CPU backend (the first shipped gemm_f32, kept
// as gemm_f32_tiled: its 60-config space is the tuner-overhead comparison):
// C[M,N] = A[M,K] * B[K,N], all row major and contiguous. One block computes
// one BM x BN tile of C: launch it with grid (ceil(N/BN), ceil(M/BM), 1).
// The tile's accumulators live in registers and L1 (BM*BN floats); BK is the
// depth of the slab of B streamed per pass, kept in the core's L2 while
// every row of the tile uses it. A full-width tile has a constant inner trip
// count of BN, which Clang vectorises for the host's widest SIMD
// (-march=native).
#include "kiln/cpu_kernel.h"

namespace kiln_cpu {

template <int BM, int BN, int BK>
void gemm_f32_tiled(const kiln::cpu::BlockContext& ctx, const float* a, const float* b, float* c,
                    int m, int n, int k) {
  const int row0 = static_cast<int>(ctx.block_idx.y) * BM;
  const int col0 = static_cast<int>(ctx.block_idx.x) * BN;
  const int rows = m - row0 < BM ? m - row0 : BM;
  const int cols = n - col0 < BN ? n - col0 : BN;
  if (rows <= 0 || cols <= 0) return;

  float acc[BM][BN];
  for (int i = 0; i < BM; ++i)
    for (int j = 0; j < BN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < k; k0 += BK) {
    const int depth = k - k0 < BK ? k - k0 : BK;
    for (int i = 0; i < rows; ++i) {
      const float* a_row = a + static_cast<long>(row0 + i) * k + k0;
      float* acc_row = acc[i];
      for (int kk = 0; kk < depth; ++kk) {
        const float av = a_row[kk];
        const float* b_row = b + static_cast<long>(k0 + kk) * n + col0;
        if (cols == BN) {
          for (int j = 0; j < BN; ++j) acc_row[j] += av * b_row[j];
        } else {
          for (int j = 0; j < cols; ++j) acc_row[j] += av * b_row[j];
        }
      }
    }
  }

  for (int i = 0; i < rows; ++i) {
    float* c_row = c + static_cast<long>(row0 + i) * n + col0;
    for (int j = 0; j < cols; ++j) c_row[j] = acc[i][j];
  }
}

}  // namespace kiln_cpu
