// The shipped CPU templates (templates/cpu/, embedded at build time) as
// KernelTemplates with their config spaces and launch geometry.
#include <algorithm>

#include "cpu_template_text.hpp"
#include "kiln/backends/cpu.hpp"
#include "kiln/compile/templates.hpp"

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

KernelTemplate gemm_f32_tiled_template() {
  KernelTemplate t =
      from_file("gemm_f32_tiled_cpu",
                "tiled fp32 GEMM for the CPU: one BM x BN tile of C per block, BK-deep slabs",
                "cpu/gemm_f32_tiled.cpp", "kiln_cpu::gemm_f32_tiled<{BM},{BN},{BK}>");
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

namespace {

std::int64_t round_up(std::int64_t x, std::int64_t to) {
  return (x + to - 1) / to * to;
}

}  // namespace

ConfigSpace gemm_f32_space() {
  ConfigSpace s;
  // NOTES: each value list is a superset for some machine; the device
  // constraints below cut it to what fits this one (AVX2 keeps narrow,
  // tall tiles; AVX-512 wide ones). GM=8 with a few column blocks gives
  // more blocks than runners: one the OS preempts (a shared machine)
  // holds back one small block, not half the work. PACK=2 (B packed, A in
  // place) skips the transposing copy of A that every column block repeats.
  s.param("MR", {4, 6, 8, 12, 14})
      .param("NR", {8, 16, 24, 32, 48, 64})
      .param("MC", {64, 128, 256})
      .param("NC", {256, 512, 1024})
      .param("KC", {128, 256, 384, 512})
      .param("PACK", {0, 1, 2})
      .param("UNROLL", {1, 4})
      .param("PF", {0, 8})
      .param("GM", {1, 2, 4, 8});
  // A row of the micro-tile is NR/V whole vectors.
  s.device_constraint("NR%vector==0", [](const Config& c, const DeviceTraits& d) {
    return param(c, "NR") % d.vector_floats() == 0;
  });
  // MR x NR/V accumulators, NR/V loaded vectors of B and one broadcast of A
  // in registers: more spills to the stack on every step of k.
  s.device_constraint("tile<=vector registers", [](const Config& c, const DeviceTraits& d) {
    const std::int64_t nv = param(c, "NR") / d.vector_floats();
    return param(c, "MR") * nv + nv + 1 <= d.vector_registers;
  });
  // B's KC x NR micro-panel is reread for every MR rows: it should stay in L1.
  s.device_constraint("KC*NR<=L1d", [](const Config& c, const DeviceTraits& d) {
    return d.l1d_bytes == 0 ||
           param(c, "KC") * param(c, "NR") * 4 <= static_cast<std::int64_t>(d.l1d_bytes);
  });
  // A's MC x KC slab is reread for every NR panel: half of L2, the rest for B.
  s.device_constraint("MC*KC<=L2/2", [](const Config& c, const DeviceTraits& d) {
    return d.l2_bytes == 0 ||
           param(c, "MC") * param(c, "KC") * 4 <= static_cast<std::int64_t>(d.l2_bytes / 2);
  });
  // Both packed panels live in the block's shared memory.
  s.device_constraint("panels<=shared", [](const Config& c, const DeviceTraits& d) {
    return d.shared_per_block == 0 ||
           gemm_f32_shared_bytes(c) <= static_cast<std::int64_t>(d.shared_per_block);
  });
  return s;
}

KernelTemplate gemm_f32_template(const DeviceTraits& device) {
  KernelTemplate t =
      from_file("gemm_f32_cpu", kGemmF32Description, "cpu/gemm_f32.cpp",
                "kiln_cpu::gemm_f32<{MR},{NR},{MC},{NC},{KC},{PACK},{UNROLL},{PF},{GM}>");
  t.space = gemm_f32_space().for_device(device);
  // Two vectors wide and six tall fits every x86-64 register file (SSE's 16
  // registers of 4 floats included); used when it fits this device's caches.
  const std::int64_t v = device.vector_floats();
  Config preferred{{"MR", std::int64_t{6}},     {"NR", 2 * v},
                   {"MC", std::int64_t{128}},   {"NC", std::int64_t{512}},
                   {"KC", std::int64_t{256}},   {"PACK", std::int64_t{1}},
                   {"UNROLL", std::int64_t{4}}, {"PF", std::int64_t{0}},
                   {"GM", std::int64_t{2}}};
  if (t.space.contains(preferred)) t.space.default_config(std::move(preferred));
  return t;
}

KernelTemplate gemm_f32_template() {
  return gemm_f32_template(host_cpu_traits());
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

KernelTemplate softmax_template() {
  KernelTemplate t = from_file("softmax_cpu", "row softmax for the CPU: ROWS rows per block",
                               "cpu/softmax.cpp", "kiln_cpu::softmax<{ROWS},{VEC},{NT},{PF}>");
  // NT: streaming stores of y win once y does not fit the caches and lose
  // while it does (the next reader then misses), so the tuner decides; so
  // does PF, the next row prefetched (within the block: a block of one row
  // has none), which pays where x comes from memory.
  t.space.param("ROWS", {1, 2, 4, 8})
      .param("VEC", {1, 2, 4})
      .param("NT", {0, 1})
      .param("PF", {0, 1})
      .constraint("PF needs ROWS>1",
                  [](const Config& c) { return param(c, "PF") == 0 || param(c, "ROWS") > 1; })
      .default_config(Config{{"ROWS", std::int64_t{2}},
                             {"VEC", std::int64_t{2}},
                             {"NT", std::int64_t{0}},
                             {"PF", std::int64_t{0}}});
  return t;
}

Dim3 gemm_f32_tiled_grid(const Config& config, std::int64_t m, std::int64_t n) {
  const std::int64_t bm = param(config, "BM"), bn = param(config, "BN");
  return {grid_extent(n, bn, "gemm_f32_tiled grid.x (N / BN)"),
          grid_extent(m, bm, "gemm_f32_tiled grid.y (M / BM)"), 1};
}

Dim3 gemm_f32_grid(const Config& config, std::int64_t /*m*/, std::int64_t n) {
  return {grid_extent(n, param(config, "NC"), "gemm_f32 grid.x (N / NC)"),
          static_cast<std::uint32_t>(param(config, "GM")), 1};
}

std::int64_t gemm_f32_shared_bytes(const Config& config) {
  // The packed B panel (KC x NC, NC rounded up to NR) and A slab (MC x KC,
  // MC rounded up to MR); + 64: the kernel aligns them to a cache line.
  const std::int64_t kc = param(config, "KC");
  const std::int64_t floats = round_up(param(config, "NC"), param(config, "NR")) * kc +
                              round_up(param(config, "MC"), param(config, "MR")) * kc;
  return floats * 4 + 64;
}

Dim3 fused_add_rmsnorm_grid(const Config& config, std::int64_t rows) {
  const std::int64_t per_block = param(config, "ROWS");
  return {grid_extent(rows, per_block, "fused_add_rmsnorm grid.x (rows / ROWS)"), 1, 1};
}

Dim3 softmax_grid(const Config& config, std::int64_t rows) {
  return {grid_extent(rows, param(config, "ROWS"), "softmax grid.x (rows / ROWS)"), 1, 1};
}

std::size_t softmax_shared_bytes(std::int64_t cols) {
  // One row of exponentials, + 64: the kernel aligns it to a cache line.
  return static_cast<std::size_t>(std::max<std::int64_t>(cols, 0)) * 4 + 64;
}

}  // namespace kiln::cpu
