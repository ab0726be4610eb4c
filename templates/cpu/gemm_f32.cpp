// Packed, register-blocked fp32 GEMM for the Kiln CPU backend, the loop
// structure of GotoBLAS/BLIS: C[M,N] = A[M,K] * B[K,N], row major, contiguous.
//
// Grid (ceil(N/NC), GM, 1): block (x, y) owns C's columns [x*NC, x*NC+NC)
// and the y-th of GM row chunks. Inside a block:
//   for each KC-deep slice of K:        pack B[KC x NC] into NR-wide panels
//     for each MC-row slab of the chunk: pack A[MC x KC] into MR-tall panels
//       for each NR panel, each MR panel: the MR x NR micro-kernel
// The micro-kernel keeps an MR x NR tile of C in vector registers and does
// MR*NR/V fused multiply-adds per step of k; the packed panels make its
// loads contiguous (B's panel stays in L1, A's slab in L2). The config space
// (kernels/cpu_templates.cpp) keeps only tiles that fit the
// device's vector registers and blocks that fit its caches.
//
// PACK=1 packs both operands; PACK=2 packs B only and reads A's rows in
// place (no transposing copy of A per column block); PACK=0 reads both in
// place (only edge tiles are packed, zero padded). UNROLL unrolls the k
// loop; PF > 0 prefetches the packed panels PF steps ahead. The block's
// packing buffers are its shared memory (scratch).
#include "kiln/cpu_kernel.h"

namespace kiln_cpu {

namespace gemm_detail {

// The widest vector this compile targets; -march=native makes it the host's.
#if defined(__AVX512F__)
constexpr int kVecMax = 16;
#elif defined(__AVX__)
constexpr int kVecMax = 8;
#else
constexpr int kVecMax = 4;
#endif

// NR floats are held as NR/VW vectors of VW; every NR in the space is a
// multiple of 4, and the space keeps multiples of the device's width.
template <int NR>
constexpr int vec_width() {
  return NR % kVecMax == 0 ? kVecMax : NR % 8 == 0 && kVecMax >= 8 ? 8 : 4;
}

template <int W>
using vfloat = float __attribute__((ext_vector_type(W)));

template <int W>
inline vfloat<W> load(const float* p) {
  vfloat<W> v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

template <int W>
inline void store(float* p, vfloat<W> v) {
  __builtin_memcpy(p, &v, sizeof v);
}

// C[rows x cols] (+)= A-panel * B-panel over kc steps. Packed A: element
// (i, k) at a[k*MR + i]; in place: a[i*lda + k]. Packed B: (k, j) at
// b[k*NR + j]; in place: b[k*ldb + j]. In place needs a full tile.
template <int MR, int NR, int UNROLL, int PF, bool PACKED_A, bool PACKED_B>
__attribute__((always_inline, min_vector_width(512))) inline void micro(
    int kc, const float* __restrict a, long lda, const float* __restrict b, long ldb,
    float* __restrict c, long ldc, int rows, int cols, bool accumulate) {
  constexpr int VW = vec_width<NR>();
  constexpr int NV = NR / VW;
  // The tile of C is read and written once, after kc steps: ask for it now
  // (into L2: L1 turns over with the panels meanwhile) so the update at the
  // end does not wait on L3 or memory.
  for (int i = 0; i < rows; ++i)
#pragma unroll
    for (int j = 0; j < NR; j += 16) __builtin_prefetch(c + i * ldc + j, 1, 2);
  vfloat<VW> acc[MR][NV];
#pragma unroll
  for (int i = 0; i < MR; ++i)
#pragma unroll
    for (int j = 0; j < NV; ++j) acc[i][j] = 0.0f;

#pragma unroll UNROLL
  for (int k = 0; k < kc; ++k) {
    const float* bk = PACKED_B ? b + static_cast<long>(k) * NR : b + k * ldb;
    vfloat<VW> bv[NV];
#pragma unroll
    for (int j = 0; j < NV; ++j) bv[j] = load<VW>(bk + j * VW);
    if constexpr (PF > 0 && PACKED_A) __builtin_prefetch(a + static_cast<long>(k + PF) * MR, 0, 3);
    if constexpr (PF > 0 && PACKED_B) __builtin_prefetch(bk + PF * NR, 0, 3);
#pragma unroll
    for (int i = 0; i < MR; ++i) {
      const float av = PACKED_A ? a[static_cast<long>(k) * MR + i] : a[i * lda + k];
#pragma unroll
      for (int j = 0; j < NV; ++j) acc[i][j] += av * bv[j];
    }
  }

  if (rows == MR && cols == NR) {
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
      for (int j = 0; j < NV; ++j) {
        float* p = c + i * ldc + j * VW;
        store<VW>(p, accumulate ? load<VW>(p) + acc[i][j] : acc[i][j]);
      }
    return;
  }
  // An edge tile: through a buffer, so the accumulators are never indexed
  // at run time (that would keep them in memory through the whole k loop).
  float tile[MR][NR];
#pragma unroll
  for (int i = 0; i < MR; ++i)
#pragma unroll
    for (int j = 0; j < NV; ++j) store<VW>(&tile[i][j * VW], acc[i][j]);
  for (int i = 0; i < rows; ++i)
    for (int jj = 0; jj < cols; ++jj) {
      const float v = tile[i][jj];
      c[i * ldc + jj] = accumulate ? c[i * ldc + jj] + v : v;
    }
}

// B[kc x nc] (row stride ldb) into NR-wide panels, zero padded to a
// multiple of NR columns. Row by row of B: each row is read once,
// front to back (one page), where panel by panel would touch kc pages per
// panel and miss the TLB on every row.
template <int NR>
void pack_b(int kc, int nc, const float* b, long ldb, float* out) {
  constexpr int VW = vec_width<NR>();
  const int full = nc / NR * NR;
  for (int k = 0; k < kc; ++k) {
    const float* src = b + k * ldb;
    float* dst = out + static_cast<long>(k) * NR;
    for (int j0 = 0; j0 < full; j0 += NR) {
      float* panel = dst + static_cast<long>(j0) * kc;
#pragma unroll
      for (int j = 0; j < NR; j += VW) store<VW>(panel + j, load<VW>(src + j0 + j));
    }
    if (full < nc) {
      float* panel = dst + static_cast<long>(full) * kc;
      for (int j = 0; j < NR; ++j) panel[j] = full + j < nc ? src[full + j] : 0.0f;
    }
  }
}

// A[mc x kc] (row stride lda) into MR-tall panels, zero padded to a
// multiple of MR rows. Column by column within a panel: MR sequential
// reads and one contiguous run of MR writes per step of k.
template <int MR>
void pack_a(int mc, int kc, const float* a, long lda, float* out) {
  for (int i0 = 0; i0 < mc; i0 += MR) {
    const int rows = mc - i0 < MR ? mc - i0 : MR;
    float* panel = out + static_cast<long>(i0) * kc;
    const float* src = a + i0 * lda;
    if (rows == MR) {
      int k = 0;
      for (; k + kVecMax <= kc; k += kVecMax) {
        vfloat<kVecMax> r[MR];
#pragma unroll
        for (int i = 0; i < MR; ++i) r[i] = load<kVecMax>(src + i * lda + k);
        float* dst = panel + static_cast<long>(k) * MR;
#pragma unroll
        for (int kk = 0; kk < kVecMax; ++kk)
#pragma unroll
          for (int i = 0; i < MR; ++i) dst[kk * MR + i] = r[i][kk];
      }
      for (; k < kc; ++k) {
#pragma unroll
        for (int i = 0; i < MR; ++i) panel[static_cast<long>(k) * MR + i] = src[i * lda + k];
      }
    } else {
      for (int k = 0; k < kc; ++k)
        for (int i = 0; i < MR; ++i)
          panel[static_cast<long>(k) * MR + i] = i < rows ? src[i * lda + k] : 0.0f;
    }
  }
}

constexpr long round_up(long x, long to) {
  return (x + to - 1) / to * to;
}

}  // namespace gemm_detail

// Shared memory the launch must give a block: kiln::cpu::gemm_f32_shared_bytes
// computes the same from the config.
template <int MR, int NR, int MC, int NC, int KC, int PACK, int UNROLL, int PF, int GM>
void gemm_f32(const kiln::cpu::BlockContext& ctx, const float* a, const float* b, float* c, int m,
              int n, int k) {
  using namespace gemm_detail;
  constexpr long kPanelB = round_up(NC, NR) * KC;
  const long chunk = round_up((m + GM - 1) / GM, MR);
  const long row_begin = static_cast<long>(ctx.block_idx.y) * chunk;
  const long row_end = row_begin + chunk < m ? row_begin + chunk : m;
  const long col0 = static_cast<long>(ctx.block_idx.x) * NC;
  const int nc = n - col0 < NC ? static_cast<int>(n - col0) : NC;
  if (row_begin >= row_end || nc <= 0) return;
  if (k <= 0) {  // an empty sum: C is zero
    for (long i = row_begin; i < row_end; ++i)
      for (int j = 0; j < nc; ++j) c[i * n + col0 + j] = 0.0f;
    return;
  }
  // 64-byte aligned panels in the block's scratch.
  const unsigned long base = reinterpret_cast<unsigned long>(ctx.shared);
  float* bp = reinterpret_cast<float*>((base + 63) & ~63ul);
  float* ap = bp + kPanelB;
  const long lda = k, ldb = n, ldc = n;

  // PACK: 1 packs both operands, 2 only B (A's rows are read in place,
  // where the transposing pack of A would cost more than it saves: small M,
  // or many column blocks that each pack the same rows), 0 neither.
  constexpr bool kPackA = PACK == 1, kPackB = PACK >= 1;
  for (int pc = 0; pc < k; pc += KC) {
    const int kc = k - pc < KC ? k - pc : KC;
    const bool accumulate = pc > 0;
    if (kPackB) pack_b<NR>(kc, nc, b + pc * ldb + col0, ldb, bp);
    for (long ic = row_begin; ic < row_end; ic += MC) {
      const int mc = row_end - ic < MC ? static_cast<int>(row_end - ic) : MC;
      if (kPackA) pack_a<MR>(mc, kc, a + ic * lda + pc, lda, ap);
      for (int jr = 0; jr < nc; jr += NR) {
        const int cols = nc - jr < NR ? nc - jr : NR;
        const float* b_tile = kPackB ? bp + static_cast<long>(jr) * kc : b + pc * ldb + col0 + jr;
        for (int ir = 0; ir < mc; ir += MR) {
          const int rows = mc - ir < MR ? mc - ir : MR;
          float* ct = c + (ic + ir) * ldc + col0 + jr;
          const float* a_tile = kPackA ? ap + static_cast<long>(ir) * kc : a + (ic + ir) * lda + pc;
          if (kPackA && kPackB) {
            micro<MR, NR, UNROLL, PF, true, true>(kc, a_tile, 0, b_tile, 0, ct, ldc, rows, cols,
                                                  accumulate);
          } else if ((kPackA || rows == MR) && (kPackB || cols == NR)) {
            micro<MR, NR, UNROLL, PF, kPackA, kPackB>(kc, a_tile, lda, b_tile, ldb, ct, ldc, rows,
                                                      cols, accumulate);
          } else {  // an edge tile in place would read past A or B: pack it
            if (!kPackA) pack_a<MR>(rows, kc, a_tile, lda, ap);
            if (!kPackB) pack_b<NR>(kc, cols, b_tile, ldb, bp);
            micro<MR, NR, UNROLL, PF, true, true>(kc, kPackA ? a_tile : ap, 0, kPackB ? b_tile : bp,
                                                  0, ct, ldc, rows, cols, accumulate);
          }
        }
      }
    }
  }
}

}  // namespace kiln_cpu
