// Row softmax for the Kiln CPU backend: for each row r of [rows, cols],
//   y[r] = exp(x[r] - max(x[r])) / sum(exp(x[r] - max(x[r])))
// One block does ROWS consecutive rows: launch it with grid
// (ceil(rows/ROWS), 1, 1) and cols * 4 + 64 bytes of shared memory. Three
// passes over a row: its max; the exponentials, into the block's scratch,
// and their sum; then y. Only the first reads x from memory when a row
// fits the core's caches, and each exponential is computed once (it costs
// more than reading x again would); y is written once, in the third pass,
// with streaming stores when NT=1, so y's lines are not read from memory
// before being overwritten. VEC independent 8-float accumulators break the
// reductions' dependency chains (the order of the sum's additions, hence
// its last bits, depends on VEC).
#include "kiln/cpu_kernel.h"

namespace kiln_cpu {

typedef float softmax_f8 __attribute__((vector_size(32)));
typedef int softmax_i8 __attribute__((vector_size(32)));

// exp(x) for x <= 0, 8 lanes at once: 2^(x log2(e)) = 2^k 2^f with k the
// nearest integer and f in [-1/2, 1/2]; 2^f by its Taylor series to f^6
// (coefficients ln(2)^n / n!, relative error below 2e-7 on that interval),
// 2^k written into the exponent bits. Below -87 exp(x) is under 2^-125,
// nothing next to the row's largest term (exp(0) = 1): clamping there keeps
// k a normal exponent.
static inline softmax_f8 softmax_exp8(softmax_f8 x) {
  const softmax_f8 lowest = {-87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f};
  x = __builtin_elementwise_max(x, lowest);
  const softmax_f8 t = x * 1.44269504088896341f;
  const softmax_f8 k = __builtin_elementwise_roundeven(t);
  const softmax_f8 f = t - k;
  softmax_f8 p = f * 1.5403530393381608e-4f + 1.3333558146428443e-3f;
  p = p * f + 9.6181291076284772e-3f;
  p = p * f + 5.5504108664821580e-2f;
  p = p * f + 2.4022650695910071e-1f;
  p = p * f + 6.9314718055994531e-1f;
  p = p * f + 1.0f;
  const softmax_i8 bits = (__builtin_convertvector(k, softmax_i8) + 127) << 23;
  return p * (softmax_f8)bits;
}

static inline float softmax_exp1(float x) {
  const softmax_f8 v = {x, x, x, x, x, x, x, x};
  return softmax_exp8(v)[0];
}

static inline softmax_f8 softmax_load8(const float* p) {
  softmax_f8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

template <int VEC>
float softmax_row_max(const float* xr, int cols) {
  softmax_f8 m[VEC];
  for (int v = 0; v < VEC; ++v) m[v] = softmax_f8{} - __builtin_inff();
  int i = 0;
  for (; i + 8 * VEC <= cols; i += 8 * VEC) {
    for (int v = 0; v < VEC; ++v)
      m[v] = __builtin_elementwise_max(m[v], softmax_load8(xr + i + 8 * v));
  }
  float mx = -__builtin_inff();
  for (int v = 0; v < VEC; ++v) {
    for (int e = 0; e < 8; ++e) mx = m[v][e] > mx ? m[v][e] : mx;
  }
  for (; i < cols; ++i) mx = xr[i] > mx ? xr[i] : mx;
  return mx;
}

// e[j] = exp(x[j] - max) for the row, into the block's scratch (a row
// fits the core's caches: it is read back at once); returns their sum.
template <int VEC>
float softmax_row_exps(const float* xr, float* e, int cols, float mx) {
  softmax_f8 s[VEC];
  for (int v = 0; v < VEC; ++v) s[v] = softmax_f8{};
  int i = 0;
  for (; i + 8 * VEC <= cols; i += 8 * VEC) {
    for (int v = 0; v < VEC; ++v) {
      const softmax_f8 ev = softmax_exp8(softmax_load8(xr + i + 8 * v) - mx);
      __builtin_memcpy(e + i + 8 * v, &ev, sizeof ev);
      s[v] += ev;
    }
  }
  float sum = 0.0f;
  for (int v = 0; v < VEC; ++v) {
    for (int k = 0; k < 8; ++k) sum += s[v][k];
  }
  for (; i < cols; ++i) sum += e[i] = softmax_exp1(xr[i] - mx);
  return sum;
}

// y = e * inv, with streaming stores when NT (they need 32-byte aligned
// addresses: plain stores up to there).
template <int NT>
void softmax_row_scale(const float* e, float* yr, int cols, float inv) {
  int j = 0;
  if (NT) {
    for (; j < cols && (reinterpret_cast<unsigned long>(yr + j) & 31) != 0; ++j) yr[j] = e[j] * inv;
  }
  for (; j + 8 <= cols; j += 8) {
    const softmax_f8 v = softmax_load8(e + j) * inv;
    if (NT) {
      __builtin_nontemporal_store(v, reinterpret_cast<softmax_f8*>(yr + j));
    } else {
      __builtin_memcpy(yr + j, &v, sizeof v);
    }
  }
  for (; j < cols; ++j) yr[j] = e[j] * inv;
}

// ctx.shared holds one row of floats (the launch gives cols * 4 + 64 bytes).
template <int ROWS, int VEC, int NT>
void softmax(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int rows, int cols) {
  const int first = static_cast<int>(ctx.block_idx.x) * ROWS;
  const int last = rows < first + ROWS ? rows : first + ROWS;
  float* e = reinterpret_cast<float*>((reinterpret_cast<unsigned long>(ctx.shared) + 63) & ~63ul);
  for (int r = first; r < last; ++r) {
    const float* xr = x + static_cast<long>(r) * cols;
    const float mx = softmax_row_max<VEC>(xr, cols);
    const float inv = 1.0f / softmax_row_exps<VEC>(xr, e, cols, mx);
    softmax_row_scale<NT>(e, y + static_cast<long>(r) * cols, cols, inv);
  }
#if defined(__x86_64__)
  // Streaming stores are weakly ordered: they must be visible before the
  // block reports itself done to the thread that reads y.
  if (NT) __builtin_ia32_sfence();
#endif
}

}  // namespace kiln_cpu
