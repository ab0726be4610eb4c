// The registry of shipped tunable kernels. Templates and config spaces come
// from where they are defined (kernels/cpu_templates.cpp,
// lib/compile/shipped_templates.cpp); this file adds what tuning a call
// needs: launch rules, argument descriptions, references and tolerances.
#include "kiln/kernels/shipped_kernels.hpp"

#include <cmath>

#include "cpu_template_text.hpp"
#include "cuda_row_kernels.hpp"
#include "host_reference.hpp"
#include "kiln/backends/cpu.hpp"
#include "kiln/compile/templates.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

namespace {

using internal::int_scalar;

std::int64_t dim(const ShapeDims& dims, const char* name) {
  auto it = dims.find(name);
  return it == dims.end() ? 0 : it->second;
}

// C = A * B with A [M,K], B [K,N] of `dtype` and C [M,N] f32.
std::vector<ArgSpec> gemm_args(DType dtype) {
  return {ArgSpec::tensor("A", dtype, {"M", "K"}, ArgRole::kInput),
          ArgSpec::tensor("B", dtype, {"K", "N"}, ArgRole::kInput),
          ArgSpec::tensor("C", DType::kF32, {"M", "N"}, ArgRole::kOutput, ArgInit::kZeros),
          ArgSpec::scalar("M", ArgType::kI32, "M"),
          ArgSpec::scalar("N", ArgType::kI32, "N"),
          ArgSpec::scalar("K", ArgType::kI32, "K")};
}

// An fp32 accumulation of K products differs from the exact sum by a
// random walk of roundings, about K * 2^-24 * |terms|; inputs are in
// [-1, 1), so terms are below 1. Elements near zero need the absolute part.
Tolerance gemm_tolerance(const ShapeDims& dims) {
  Tolerance t;
  t.atol = 1e-5 + 2e-7 * static_cast<double>(dim(dims, "K"));
  t.rtol = 1e-3;
  return t;
}

ShippedKernel gemm_entry(std::string name, std::string backend, DType dtype) {
  ShippedKernel k;
  k.name = std::move(name);
  k.family = "gemm";
  k.backend = backend;
  k.dims = {"M", "N", "K"};
  k.dtypes = {dtype};
  k.args = gemm_args;
  k.check_shape = [](const ShapeDims&) { return ok_status(); };
  k.reference = internal::gemm_reference;
  k.flops = [](const ShapeDims& d) {
    return 2.0 * static_cast<double>(dim(d, "M")) * static_cast<double>(dim(d, "N")) *
           static_cast<double>(dim(d, "K"));
  };
  k.bytes = [dtype](const ShapeDims& d) {
    const double m = static_cast<double>(dim(d, "M")), n = static_cast<double>(dim(d, "N")),
                 kk = static_cast<double>(dim(d, "K"));
    return static_cast<double>(dtype_size(dtype)) * (m * kk + kk * n) + 4.0 * m * n;
  };
  k.tolerance = gemm_tolerance;
  return k;
}

ShippedKernel cuda_gemm(std::string name, DType dtype) {
  ShippedKernel k = gemm_entry(name, "cuda", dtype);
  const KernelTemplate& tmpl = shipped_template(name);
  k.description = tmpl.description;
  k.kernel = [name] {
    TunableKernel t;
    t.tmpl = shipped_template(name);
    t.launch = [](const Config& c, const ArgList& args) {
      const std::int64_t m = int_scalar(args, "M"), n = int_scalar(args, "N");
      LaunchGeometry g;
      g.grid = {grid_extent(n, c.get_int("BN"), "grid.x (N / BN)"),
                grid_extent(m, c.get_int("BM"), "grid.y (M / BM)"), 1};
      g.block = {static_cast<std::uint32_t>(gemm_threads(c)), 1, 1};
      g.shared_bytes = gemm_shared_bytes(c);
      return g;
    };
    t.outputs = {"C"};
    return t;
  };
  // The template moves 16-byte chunks of A's and B's rows with cp.async.
  k.check_shape = [](const ShapeDims& d) -> Status {
    if (dim(d, "N") % 8 != 0 || dim(d, "K") % 8 != 0) {
      return make_error(ErrorCode::kInvalidArgument,
                        "N and K must be multiples of 8 (the kernel copies rows in 16-byte "
                        "chunks): round them up, e.g. N=" +
                            std::to_string((dim(d, "N") + 7) / 8 * 8) +
                            ",K=" + std::to_string((dim(d, "K") + 7) / 8 * 8));
    }
    return ok_status();
  };
  return k;
}

// A CPU GEMM: its template (made afresh for each tuning, bound to this
// host) and launch geometry from the config and the call's M and N.
using GemmGeometry = LaunchGeometry (*)(const Config&, std::int64_t m, std::int64_t n);

// `description`: given, where building the template to read it is costly.
ShippedKernel cpu_gemm_of(std::string name, KernelTemplate (*make)(), GemmGeometry geometry,
                          const char* description = nullptr) {
  ShippedKernel k = gemm_entry(std::move(name), "cpu", DType::kF32);
  k.description = description ? description : make().description;
  k.kernel = [make, geometry] {
    TunableKernel t;
    t.tmpl = make();
    t.launch = [geometry](const Config& c, const ArgList& args) {
      return geometry(c, int_scalar(args, "M"), int_scalar(args, "N"));
    };
    t.outputs = {"C"};
    return t;
  };
  return k;
}

ShippedKernel cpu_gemm() {
  return cpu_gemm_of(
      "gemm_f32", cpu::gemm_f32_template,
      [](const Config& c, std::int64_t m, std::int64_t n) {
        LaunchGeometry g;
        g.grid = cpu::gemm_f32_grid(c, m, n);
        g.shared_bytes = static_cast<std::size_t>(cpu::gemm_f32_shared_bytes(c));
        return g;
      },
      cpu::kGemmF32Description);
}

// The first shipped CPU GEMM, kept with its 60-config space: the space
// Kiln's tuner overhead is compared on (docs/benchmarks.md). Its own family,
// so `--kernel gemm` still means gemm_f32 on the CPU.
ShippedKernel cpu_gemm_tiled() {
  ShippedKernel k = cpu_gemm_of("gemm_f32_tiled", cpu::gemm_f32_tiled_template,
                                [](const Config& c, std::int64_t m, std::int64_t n) {
                                  LaunchGeometry g;
                                  g.grid = cpu::gemm_f32_tiled_grid(c, m, n);
                                  return g;
                                });
  k.family = "gemm_tiled";
  return k;
}

// An f32 row kernel of the CPU: one row of `width` floats after another.
ShippedKernel cpu_row_entry(std::string name, std::string family, const KernelTemplate& tmpl,
                            const char* width) {
  ShippedKernel k;
  k.name = std::move(name);
  k.family = std::move(family);
  k.backend = "cpu";
  k.description = tmpl.description;
  k.dims = {"rows", width};
  k.dtypes = {DType::kF32};
  k.check_shape = [](const ShapeDims&) { return ok_status(); };
  return k;
}

ShippedKernel cpu_rmsnorm() {
  ShippedKernel k = cpu_row_entry("fused_add_rmsnorm", "fused_add_rmsnorm",
                                  cpu::fused_add_rmsnorm_template(), "hidden");
  k.in_place = true;
  k.kernel = [] {
    TunableKernel t;
    t.tmpl = cpu::fused_add_rmsnorm_template();
    t.launch = [](const Config& c, const ArgList& args) {
      LaunchGeometry g;
      g.grid = cpu::fused_add_rmsnorm_grid(c, int_scalar(args, "rows"));
      return g;
    };
    // In place: every repetition must start from the caller's x and
    // residual, or each would add x into residual once more.
    t.outputs = {"x", "residual"};
    t.restore_value = {"x", "residual"};
    return t;
  };
  k.args = [](DType) {
    return std::vector<ArgSpec>{
        ArgSpec::tensor("x", DType::kF32, {"rows", "hidden"}, ArgRole::kInOut),
        ArgSpec::tensor("residual", DType::kF32, {"rows", "hidden"}, ArgRole::kInOut),
        ArgSpec::tensor("weight", DType::kF32, {"hidden"}, ArgRole::kInput),
        ArgSpec::scalar("rows", ArgType::kI32, "rows"),
        ArgSpec::scalar("hidden", ArgType::kI32, "hidden"),
        ArgSpec::literal("eps", ArgType::kF32, 1e-6)};
  };
  k.reference = internal::fused_add_rmsnorm_reference;
  k.flops = [](const ShapeDims& d) {
    return 4.0 * static_cast<double>(dim(d, "rows")) * static_cast<double>(dim(d, "hidden"));
  };
  k.bytes = [](const ShapeDims& d) {
    const double rows = static_cast<double>(dim(d, "rows")),
                 hidden = static_cast<double>(dim(d, "hidden"));
    return 4.0 * (4.0 * rows * hidden + hidden);  // x, residual read and written; weight
  };
  // One rounding of the add, then a normalisation whose sum order depends
  // on VEC: relative differences of a few ulps.
  k.tolerance = [](const ShapeDims&) { return Tolerance{1e-5, 1e-4, 0}; };
  return k;
}

ShippedKernel cpu_softmax() {
  ShippedKernel k = cpu_row_entry("softmax_f32", "softmax", cpu::softmax_template(), "cols");
  k.kernel = [] {
    TunableKernel t;
    t.tmpl = cpu::softmax_template();
    t.launch = [](const Config& c, const ArgList& args) {
      LaunchGeometry g;
      g.grid = cpu::softmax_grid(c, int_scalar(args, "rows"));
      g.shared_bytes = cpu::softmax_shared_bytes(int_scalar(args, "cols"));
      return g;
    };
    t.outputs = {"y"};
    return t;
  };
  k.args = [](DType) {
    return std::vector<ArgSpec>{
        ArgSpec::tensor("x", DType::kF32, {"rows", "cols"}, ArgRole::kInput),
        ArgSpec::tensor("y", DType::kF32, {"rows", "cols"}, ArgRole::kOutput, ArgInit::kZeros),
        ArgSpec::scalar("rows", ArgType::kI32, "rows"),
        ArgSpec::scalar("cols", ArgType::kI32, "cols")};
  };
  k.reference = internal::softmax_reference;
  k.flops = [](const ShapeDims& d) {
    return 5.0 * static_cast<double>(dim(d, "rows")) * static_cast<double>(dim(d, "cols"));
  };
  // x read and y written once each.
  k.bytes = [](const ShapeDims& d) {
    return 8.0 * static_cast<double>(dim(d, "rows")) * static_cast<double>(dim(d, "cols"));
  };
  // A polynomial exp (relative error under 2e-7) and fp32 sums of the row
  // in an order VEC decides: a few ulps of the largest terms.
  k.tolerance = [](const ShapeDims&) { return Tolerance{1e-6, 1e-4, 0}; };
  return k;
}

// The version of the launch rules, prunes and constraint predicates of the
// shipped kernels (here, cuda_row_kernels.cpp and the grid functions of
// kernels/cpu_templates.cpp): code the definition hash cannot see, while it does see the
// embedded templates and spaces. Bump it on any change to that code, or
// records tuned under the old rules are served (within one Kiln version:
// the toolchain fingerprint changes with every release anyway).
constexpr const char* kShippedRulesVersion = "shipped-rules-2";

std::vector<ShippedKernel> build_registry() {
  std::vector<ShippedKernel> out;
  // Every shipped kernel whatever backends this build has, as the CUDA ones
  // always were: tuning one whose backend is missing says how to build it.
  out.push_back(cpu_gemm());
  out.push_back(cpu_rmsnorm());
  out.push_back(cpu_gemm_tiled());
  out.push_back(cpu_softmax());
  out.push_back(cuda_gemm("gemm_f16", DType::kF16));
  out.push_back(cuda_gemm("gemm_bf16", DType::kBF16));
  for (ShippedKernel& k : internal::cuda_row_kernels()) out.push_back(std::move(k));
  for (ShippedKernel& k : out) {
    k.kernel = [make = std::move(k.kernel)] {
      TunableKernel t = make();
      t.version = kShippedRulesVersion;
      return t;
    };
  }
  return out;
}

std::string join_names(const std::vector<const ShippedKernel*>& kernels) {
  std::string out;
  for (const auto* k : kernels) out += (out.empty() ? "" : ", ") + k->name;
  return out;
}

// The kernel of `family` for this backend and dtype, if one exists.
const ShippedKernel* sibling(const std::string& family, std::optional<std::string> backend,
                             std::optional<DType> dtype) {
  for (const auto& k : shipped_kernels()) {
    if (k.family != family) continue;
    if (backend && k.backend != *backend) continue;
    if (dtype && std::find(k.dtypes.begin(), k.dtypes.end(), *dtype) == k.dtypes.end()) continue;
    return &k;
  }
  return nullptr;
}

}  // namespace

const std::vector<ShippedKernel>& shipped_kernels() {
  static const std::vector<ShippedKernel> registry = build_registry();
  return registry;
}

const ShippedKernel* find_shipped_kernel(std::string_view name) {
  for (const auto& k : shipped_kernels()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

Result<const ShippedKernel*> resolve_shipped_kernel(std::string_view name,
                                                    std::optional<std::string> backend,
                                                    std::optional<DType> dtype) {
  if (const ShippedKernel* k = find_shipped_kernel(name)) {
    // The kernel to suggest instead: of the backend asked for, or of any.
    const ShippedKernel* other = sibling(k->family, backend, dtype);
    const std::string instead =
        other ? ": use --kernel " + other->name + " (" + other->backend + ")" : "";
    if (backend && k->backend != *backend) {
      return make_error(ErrorCode::kInvalidArgument,
                        k->name + " is a " + k->backend + " kernel, not " + *backend +
                            (other ? instead : ": no shipped " + k->family + " runs there"));
    }
    if (dtype && std::find(k->dtypes.begin(), k->dtypes.end(), *dtype) == k->dtypes.end()) {
      return make_error(ErrorCode::kInvalidArgument,
                        k->name + " takes " + dtype_name(k->dtypes.front()) + ", not " +
                            dtype_name(*dtype) +
                            (other ? instead : ": no shipped " + k->family + " takes it"));
    }
    return k;
  }
  std::vector<const ShippedKernel*> family;
  for (const auto& k : shipped_kernels()) {
    if (k.family == name) family.push_back(&k);
  }
  if (family.empty()) {
    std::vector<const ShippedKernel*> all;
    std::string families;
    for (const auto& k : shipped_kernels()) {
      all.push_back(&k);
      if (families.find(k.family) == std::string::npos)
        families += (families.empty() ? "" : ", ") + k.family;
    }
    return make_error(ErrorCode::kNotFound, "no shipped kernel '" + std::string(name) +
                                                "': choose one of " + join_names(all) +
                                                " (or a family: " + families +
                                                "); `kiln kernels` lists them");
  }
  // A family without a backend: CUDA where a device is present, else the CPU.
  std::optional<std::string> where = backend;
  if (!where) {
    const bool cuda = cuda_device_count().ok() && sibling(std::string(name), "cuda", dtype);
    where = cuda ? "cuda" : "cpu";
    if (!sibling(std::string(name), where, dtype)) where.reset();
  }
  if (const ShippedKernel* k = sibling(std::string(name), where, dtype)) return k;
  return make_error(ErrorCode::kInvalidArgument,
                    "no shipped " + std::string(name) + " for" +
                        (where ? std::string(" backend ") + *where : "") +
                        (dtype ? std::string(" dtype ") + dtype_name(*dtype) : "") + ": the " +
                        std::string(name) + " kernels are " + join_names(family));
}

}  // namespace kiln
