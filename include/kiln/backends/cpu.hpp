// The CPU backend: Clang as a library compiles C++ kernel templates to host
// objects (kiln::Compiler), LLVM ORC links them into the process, and a
// kiln::Device runs them over a grid of blocks on a thread pool.
//
// A CPU kernel is a function whose first parameter is the block it runs:
//
//   #include "kiln/cpu_kernel.h"
//   template <int BM, int BN>
//   void gemm(const kiln::cpu::BlockContext& ctx, const float* a, ..., int n);
//
// ctx.block_idx / grid_dim / block_dim follow CUDA's meaning (one call per
// block; the block's "threads" are the kernel's own loops, vectorised by
// the compiler), and ctx.shared is the block's dynamic shared memory
// (LaunchConfig::shared_bytes, scratch private to the worker running it).
// Arguments after the context: pointers, bool, 32/64-bit integers, float,
// double; a launch checks them against the compiled entry's types.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kiln/compile/compile.hpp"
#include "kiln/compile/kernel.hpp"
#include "kiln/device/device.hpp"

namespace kiln::cpu {

// The host CPU device. `threads` workers run blocks (0: one per hardware
// thread); launches are synchronous and blocks are spread over the workers
// by an atomic counter. Errors (a value) when LLVM cannot target this host.
Result<std::unique_ptr<Device>> open_device(int threads = 0);

// Clang + LLVM compiling CompileUnits with format kCpuObject for arch
// "host" (or the host CPU name: open_device()->properties().arch).
// KILN_CPU_FLAGS (Options::cpu_flags) are appended to every compile.
std::unique_ptr<Compiler> make_compiler();

// How many objects `device` (a CPU device; 0 for any other) has linked: one
// per distinct program loaded, however many kernels were loaded from it.
std::uint64_t modules_loaded(const Device& device);

// The host CPU's LLVM name, "znver3": the arch of the CPU device.
std::string host_arch();

// The shipped CPU templates (templates/cpu/) with their config spaces.
//   gemm_f32_cpu: C = A * B, fp32, row major; args (const float* A, const
//     float* B, float* C, int M, int N, int K); packed panels and a register
//     micro-tile; params MR, NR (micro-tile), MC, NC, KC (cache blocks),
//     PACK, UNROLL, PF (prefetch distance), GM (row chunks of the grid). Its
//     space has device constraints (vector width and registers, L1d, L2,
//     block scratch), bound to `device` (default: this host's CPU).
//   gemm_f32_tiled_cpu: the same call, a plain tiled loop; params BM, BN, BK
//     (60 configs: the space of the tuner-overhead comparison).
//   fused_add_rmsnorm_cpu: in place on x and residual; args (float* x,
//     float* residual, const float* weight, int rows, int hidden, float eps);
//     params ROWS, VEC.
//   softmax_cpu: y = softmax(x) per row; args (const float* x, float* y,
//     int rows, int cols); params ROWS, VEC, NT (streaming stores of y).
KernelTemplate gemm_f32_template();
KernelTemplate gemm_f32_template(const DeviceTraits& device);
// gemm_f32's space before it is bound to a device.
ConfigSpace gemm_f32_space();
KernelTemplate gemm_f32_tiled_template();
KernelTemplate fused_add_rmsnorm_template();
KernelTemplate softmax_template();
// Their launch grids (block is unused: {1,1,1}); gemm_f32 needs
// gemm_f32_shared_bytes() of shared memory per block for its packed panels.
Dim3 gemm_f32_grid(const Config& config, std::int64_t m, std::int64_t n);
std::int64_t gemm_f32_shared_bytes(const Config& config);
Dim3 gemm_f32_tiled_grid(const Config& config, std::int64_t m, std::int64_t n);
Dim3 fused_add_rmsnorm_grid(const Config& config, std::int64_t rows);
Dim3 softmax_grid(const Config& config, std::int64_t rows);
// softmax_cpu's shared memory per block: one row of floats for a row of `cols`.
std::size_t softmax_shared_bytes(std::int64_t cols);

}  // namespace kiln::cpu
