// Kiln's shipped tensor-core GEMM: C[M,N] (fp32) = A[M,K] * B[K,N], A and B
// row-major in fp16 or bf16, fp32 accumulation with mma.sync.m16n8k16.
//
// A block computes a BM x BN tile of C with (BM/WM) x (BN/WN) warps, each a
// WM x WN sub-tile. K advances BK at a time through a STAGES-deep ring of
// shared-memory buffers filled by cp.async, so the loads of the next tiles
// overlap the math on the current one. Rows of the shared tiles are padded
// by 8 elements (16 bytes) so ldmatrix reads hit distinct banks.
//
// Launch (runtime/kernels/shipped_kernels.cpp, gemm_threads): block = (BM/WM)*(BN/WN)*32
// threads, grid = (ceil(N/BN), ceil(M/BM)), dynamic shared memory =
// STAGES*(BM*(BK+8) + BK*(BN+8))*sizeof(T) bytes. Edges are handled for any
// M and N; K and N must be multiples of 8 (16-byte cp.async chunks).
// Requires sm_80 or newer.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace kiln {

namespace gemm_detail {

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared; `bytes` < 16 zero-fills the rest (edges).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

template <class T>
struct Mma;

template <>
struct Mma<__half> {
  __device__ __forceinline__ static void run(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                             unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

template <>
struct Mma<__nv_bfloat16> {
  __device__ __forceinline__ static void run(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                             unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

// Copies one BM x BK tile of A and one BK x BN tile of B into stage buffers.
template <class T, int BM, int BN, int BK, int THREADS>
__device__ __forceinline__ void load_tiles(T* As, T* Bs, const T* A, const T* B, int M, int N,
                                           int K, int m0, int n0, int k0) {
  constexpr int kAStride = BK + 8, kBStride = BN + 8;
  constexpr int kAChunks = BM * BK / 8, kBChunks = BK * BN / 8;
  static_assert(kAChunks % THREADS == 0 && kBChunks % THREADS == 0,
                "kiln gemm: tile chunks must divide evenly over the threads");
#pragma unroll
  for (int c = threadIdx.x; c < kAChunks; c += THREADS) {
    const int row = c / (BK / 8), col = (c % (BK / 8)) * 8;
    const int gm = m0 + row, gk = k0 + col;
    const bool in = gm < M && gk < K;
    cp_async16(As + row * kAStride + col, in ? A + static_cast<long>(gm) * K + gk : A, in ? 16 : 0);
  }
#pragma unroll
  for (int c = threadIdx.x; c < kBChunks; c += THREADS) {
    const int row = c / (BN / 8), col = (c % (BN / 8)) * 8;
    const int gk = k0 + row, gn = n0 + col;
    const bool in = gk < K && gn < N;
    cp_async16(Bs + row * kBStride + col, in ? B + static_cast<long>(gk) * N + gn : B, in ? 16 : 0);
  }
}

}  // namespace gemm_detail

template <class T, int BM, int BN, int BK, int WM, int WN, int STAGES>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
    gemm(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C, int M, int N,
         int K) {
  using namespace gemm_detail;
  constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  constexpr int kThreads = kWarpsM * kWarpsN * 32;
  constexpr int kMI = WM / 16, kNI = WN / 8;  // mma tiles per warp
  constexpr int kAStride = BK + 8, kBStride = BN + 8;
  constexpr int kAStage = BM * kAStride, kBStage = BK * kBStride;
  static_assert(BM % WM == 0 && BN % WN == 0, "kiln gemm: warp tile must divide the block tile");
  static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0,
                "kiln gemm: WM, WN and BK must be multiples of 16");
  static_assert(STAGES >= 2, "kiln gemm: the pipeline needs at least 2 stages");
#if defined(KILN_GEMM_WITH_CCCL)
  static_assert(cuda::std::is_same_v<T, __half> || cuda::std::is_same_v<T, __nv_bfloat16>,
                "kiln gemm: T must be __half or __nv_bfloat16");
#endif

  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* As = reinterpret_cast<T*>(smem_raw);
  T* Bs = As + STAGES * kAStage;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm0 = (warp / kWarpsN) * WM, wn0 = (warp % kWarpsN) * WN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int k_tiles = (K + BK - 1) / BK;

  float acc[kMI][kNI][4];
#pragma unroll
  for (int i = 0; i < kMI; ++i)
#pragma unroll
    for (int j = 0; j < kNI; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

        // Prologue: fill STAGES-1 stages.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) {
      load_tiles<T, BM, BN, BK, kThreads>(As + s * kAStage, Bs + s * kBStage, A, B, M, N, K, m0, n0,
                                          s * BK);
    }
    cp_async_commit();  // one group per stage, even empty, keeps the count exact
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();  // tile kt landed; every warp is done with tile kt-1's stage
    const int next = kt + STAGES - 1;
    if (next < k_tiles) {
      const int s = next % STAGES;
      load_tiles<T, BM, BN, BK, kThreads>(As + s * kAStage, Bs + s * kBStage, A, B, M, N, K, m0, n0,
                                          next * BK);
    }
    cp_async_commit();

    const T* as = As + (kt % STAGES) * kAStage;
    const T* bs = Bs + (kt % STAGES) * kBStage;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned a[kMI][4];
      unsigned b[kNI][2];
#pragma unroll
      for (int i = 0; i < kMI; ++i) {
        const int row = wm0 + i * 16 + (lane & 15), col = kk + (lane >> 4) * 8;
        ldmatrix_x4(a[i], as + row * kAStride + col);
      }
#pragma unroll
      for (int j = 0; j < kNI; j += 2) {
        const int row = kk + (lane & 15), col = wn0 + j * 8 + (lane >> 4) * 8;
        unsigned r[4];
        ldmatrix_x4_trans(r, bs + row * kBStride + col);
        b[j][0] = r[0];
        b[j][1] = r[1];
        b[j + 1][0] = r[2];
        b[j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < kMI; ++i)
#pragma unroll
        for (int j = 0; j < kNI; ++j) Mma<T>::run(acc[i][j], a[i], b[j][0], b[j][1]);
    }
  }
  cp_async_wait<0>();

  // Epilogue: each thread holds rows lane/4 and lane/4+8, columns 2*(lane%4)+{0,1}.
#pragma unroll
  for (int i = 0; i < kMI; ++i)
#pragma unroll
    for (int j = 0; j < kNI; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + wm0 + i * 16 + lane / 4 + h * 8;
        const int col = n0 + wn0 + j * 8 + (lane % 4) * 2;
        if (row < M && col < N) C[static_cast<long>(row) * N + col] = acc[i][j][2 * h];
        if (row < M && col + 1 < N) C[static_cast<long>(row) * N + col + 1] = acc[i][j][2 * h + 1];
      }
}

}  // namespace kiln
