// A user kernel for Kiln's CPU backend: out[N,M] = transpose(in[M,N]), fp32,
// row major. One block moves one TILE x TILE tile (grid: ceil(N/TILE) x
// ceil(M/TILE)). With STAGED the tile is first copied into the block's
// shared memory (ctx.shared, TILE*TILE floats) so that both the reads of
// `in` and the writes of `out` run along rows; without it, the writes
// stride down a column. Which wins, and at which TILE, depends on the
// machine's caches: that is what `kiln tune` finds out (space.json).
#include "kiln/cpu_kernel.h"

namespace example {

template <int TILE, bool STAGED>
void transpose(const kiln::cpu::BlockContext& ctx, const float* in, float* out, int m, int n) {
  const int col0 = static_cast<int>(ctx.block_idx.x) * TILE;  // in's columns = out's rows
  const int row0 = static_cast<int>(ctx.block_idx.y) * TILE;  // in's rows = out's columns
  const int cols = n - col0 < TILE ? n - col0 : TILE;
  const int rows = m - row0 < TILE ? m - row0 : TILE;
  if (STAGED) {
    float* tile = static_cast<float*>(ctx.shared);  // [TILE][TILE], transposed on the way in
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        tile[j * TILE + i] = in[static_cast<long>(row0 + i) * n + col0 + j];
    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < rows; ++i)
        out[static_cast<long>(col0 + j) * m + row0 + i] = tile[j * TILE + i];
  } else {
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        out[static_cast<long>(col0 + j) * m + row0 + i] =
            in[static_cast<long>(row0 + i) * n + col0 + j];
  }
}

}  // namespace example
