// Row softmax for the Kiln CPU backend: for each row r of [rows, cols],
//   y[r] = exp(x[r] - max(x[r])) / sum(exp(x[r] - max(x[r])))
// One block does ROWS consecutive rows: launch it with grid
// (ceil(rows/ROWS), 1, 1) and cols * 4 + 64 bytes of shared memory. Three
// passes over a row: its max; the exponentials, into the block's scratch,
// and their sum; then y. Only the first reads x from memory when a row
// fits the core's caches, and each exponential is computed once (it costs
// more than reading x again would); y is written once, in the third pass,
// with streaming stores when NT=1, so y's lines are not read from memory
// before being overwritten. VEC independent vector accumulators break the
// reductions' dependency chains (the order of the sum's additions, hence
// its last bits, depends on VEC and on the vector's lanes). A vector is 16
// floats where the target has AVX-512 and 8 elsewhere: the exponentials'
// pass issues about 20 instructions a vector and is bound by how many the
// core can issue, not by its arithmetic units, so twice the lanes took it
// from 0.25 to 0.18 ns a float on a Zen 4 core. With PF=1 the exponentials' pass, the
// longest, also prefetches the block's next row: its first pass then finds
// it in the caches instead of waiting on memory, and the row's reads from
// memory run while this one's arithmetic does, not after it.
#include "kiln/cpu_kernel.h"

namespace kiln_cpu {

#if defined(__AVX512F__)
#define KILN_SOFTMAX_LANES 16
#else
#define KILN_SOFTMAX_LANES 8
#endif
typedef float softmax_fv __attribute__((vector_size(4 * KILN_SOFTMAX_LANES)));
typedef int softmax_iv __attribute__((vector_size(4 * KILN_SOFTMAX_LANES)));
constexpr int kSoftmaxLanes = KILN_SOFTMAX_LANES;

// exp(x) for x <= 0, a vector at once: 2^(x log2(e)) = 2^k 2^f with k the
// nearest integer and f in [-1/2, 1/2]; 2^f by its Taylor series to f^6
// (coefficients ln(2)^n / n!, relative error below 2e-7 on that interval),
// 2^k written into the exponent bits. Below -87 exp(x) is under 2^-125,
// nothing next to the row's largest term (exp(0) = 1): clamping there keeps
// k a normal exponent.
static inline softmax_fv softmax_expv(softmax_fv x) {
  const softmax_fv lowest = softmax_fv{} - 87.0f;
  x = __builtin_elementwise_max(x, lowest);
  const softmax_fv t = x * 1.44269504088896341f;
  const softmax_fv k = __builtin_elementwise_roundeven(t);
  const softmax_fv f = t - k;
  softmax_fv p = f * 1.5403530393381608e-4f + 1.3333558146428443e-3f;
  p = p * f + 9.6181291076284772e-3f;
  p = p * f + 5.5504108664821580e-2f;
  p = p * f + 2.4022650695910071e-1f;
  p = p * f + 6.9314718055994531e-1f;
  p = p * f + 1.0f;
  const softmax_iv bits = (__builtin_convertvector(k, softmax_iv) + 127) << 23;
  return p * (softmax_fv)bits;
}

static inline float softmax_exp1(float x) {
  const softmax_fv v = softmax_fv{} + x;
  return softmax_expv(v)[0];
}

static inline softmax_fv softmax_loadv(const float* p) {
  softmax_fv v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

template <int VEC>
float softmax_row_max(const float* xr, int cols) {
  softmax_fv m[VEC];
  for (int v = 0; v < VEC; ++v) m[v] = softmax_fv{} - __builtin_inff();
  int i = 0;
  for (; i + kSoftmaxLanes * VEC <= cols; i += kSoftmaxLanes * VEC) {
    for (int v = 0; v < VEC; ++v)
      m[v] = __builtin_elementwise_max(m[v], softmax_loadv(xr + i + kSoftmaxLanes * v));
  }
  float mx = -__builtin_inff();
  for (int v = 0; v < VEC; ++v) {
    for (int e = 0; e < kSoftmaxLanes; ++e) mx = m[v][e] > mx ? m[v][e] : mx;
  }
  for (; i < cols; ++i) mx = xr[i] > mx ? xr[i] : mx;
  return mx;
}

// e[j] = exp(x[j] - max) for the row, into the block's scratch (a row
// fits the core's caches: it is read back at once); returns their sum.
// `next`: the row to prefetch meanwhile, as many floats as this one (null:
// none).
template <int VEC>
float softmax_row_exps(const float* xr, float* e, int cols, float mx, const float* next) {
  softmax_fv s[VEC];
  for (int v = 0; v < VEC; ++v) s[v] = softmax_fv{};
  int i = 0;
  for (; i + kSoftmaxLanes * VEC <= cols; i += kSoftmaxLanes * VEC) {
    if (next) {
      for (int p = 0; p < kSoftmaxLanes * VEC; p += 16) __builtin_prefetch(next + i + p, 0, 3);
    }
    for (int v = 0; v < VEC; ++v) {
      const softmax_fv ev = softmax_expv(softmax_loadv(xr + i + kSoftmaxLanes * v) - mx);
      __builtin_memcpy(e + i + kSoftmaxLanes * v, &ev, sizeof ev);
      s[v] += ev;
    }
  }
  float sum = 0.0f;
  for (int v = 0; v < VEC; ++v) {
    for (int k = 0; k < kSoftmaxLanes; ++k) sum += s[v][k];
  }
  for (; i < cols; ++i) sum += e[i] = softmax_exp1(xr[i] - mx);
  return sum;
}

// y = e * inv, with streaming stores when NT (they need vector-aligned
// addresses: plain stores up to there).
template <int NT>
void softmax_row_scale(const float* e, float* yr, int cols, float inv) {
  int j = 0;
  if (NT) {
    for (; j < cols && (reinterpret_cast<unsigned long>(yr + j) & (4 * kSoftmaxLanes - 1)) != 0;
         ++j)
      yr[j] = e[j] * inv;
  }
  for (; j + kSoftmaxLanes <= cols; j += kSoftmaxLanes) {
    const softmax_fv v = softmax_loadv(e + j) * inv;
    if (NT) {
      __builtin_nontemporal_store(v, reinterpret_cast<softmax_fv*>(yr + j));
    } else {
      __builtin_memcpy(yr + j, &v, sizeof v);
    }
  }
  for (; j < cols; ++j) yr[j] = e[j] * inv;
}

// ctx.shared holds one row of floats (the launch gives cols * 4 + 64 bytes).
template <int ROWS, int VEC, int NT, int PF>
void softmax(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int rows, int cols) {
  const int first = static_cast<int>(ctx.block_idx.x) * ROWS;
  const int last = rows < first + ROWS ? rows : first + ROWS;
  float* e = reinterpret_cast<float*>((reinterpret_cast<unsigned long>(ctx.shared) + 63) & ~63ul);
  for (int r = first; r < last; ++r) {
    const float* xr = x + static_cast<long>(r) * cols;
    const float mx = softmax_row_max<VEC>(xr, cols);
    const float* next = PF && r + 1 < last ? xr + cols : nullptr;
    const float inv = 1.0f / softmax_row_exps<VEC>(xr, e, cols, mx, next);
    softmax_row_scale<NT>(e, y + static_cast<long>(r) * cols, cols, inv);
  }
#if defined(__x86_64__)
  // Streaming stores are weakly ordered: they must be visible before the
  // block reports itself done to the thread that reads y.
  if (NT) __builtin_ia32_sfence();
#endif
}

}  // namespace kiln_cpu
