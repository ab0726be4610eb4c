// The shipped CPU templates (templates/cpu/, embedded at build time) as
// KernelTemplates with their config spaces and launch geometry.
#include "kiln/compile/templates.hpp"
#include "kiln/runtime/cpu.hpp"

namespace kiln::cpu {

namespace {

std::int64_t param(const Config& c, const char* name) {
  return c.get_int(name);
}

// A template whose source is the embedded file templates/<file>.
KernelTemplate from_file(std::string name, std::string description, std::string_view file,
                         std::string entry) {
  KernelTemplate t;
  t.name = std::move(name);
  t.description = std::move(description);
  t.source = std::string(embedded_template_file(file));
  t.entry = std::move(entry);
  return t;
}

}  // namespace

KernelTemplate gemm_f32_template() {
  KernelTemplate t = from_file(
      "gemm_f32_cpu", "tiled fp32 GEMM for the CPU: one BM x BN tile of C per block, BK-deep slabs",
      "cpu/gemm_f32.cpp", "kiln_cpu::gemm_f32<{BM},{BN},{BK}>");
  t.space.param("BM", {4, 8, 16, 32, 64})
      .param("BN", {16, 32, 64, 128})
      .param("BK", {16, 64, 256})
      // The accumulator tile lives on the stack and should stay in L1.
      .constraint("acc<=32KiB",
                  [](const Config& c) { return param(c, "BM") * param(c, "BN") * 4 <= 32 * 1024; })
      .default_config(
          Config{{"BM", std::int64_t{16}}, {"BN", std::int64_t{64}}, {"BK", std::int64_t{64}}});
  return t;
}

KernelTemplate fused_add_rmsnorm_template() {
  KernelTemplate t = from_file(
      "fused_add_rmsnorm_cpu", "in-place residual add + RMSNorm for the CPU: ROWS rows per block",
      "cpu/fused_add_rmsnorm.cpp", "kiln_cpu::fused_add_rmsnorm<{ROWS},{VEC}>");
  t.space.param("ROWS", {1, 2, 4, 8})
      .param("VEC", {4, 8, 16, 32})
      .default_config(Config{{"ROWS", std::int64_t{2}}, {"VEC", std::int64_t{16}}});
  return t;
}

Dim3 gemm_f32_grid(const Config& config, std::int64_t m, std::int64_t n) {
  const std::int64_t bm = param(config, "BM"), bn = param(config, "BN");
  return {grid_extent(n, bn, "gemm_f32 grid.x (N / BN)"),
          grid_extent(m, bm, "gemm_f32 grid.y (M / BM)"), 1};
}

Dim3 fused_add_rmsnorm_grid(const Config& config, std::int64_t rows) {
  const std::int64_t per_block = param(config, "ROWS");
  return {grid_extent(rows, per_block, "fused_add_rmsnorm grid.x (rows / ROWS)"), 1, 1};
}

}  // namespace kiln::cpu
