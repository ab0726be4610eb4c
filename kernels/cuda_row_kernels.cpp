#include "cuda_row_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "host_reference.hpp"
#include "kiln/compile/templates.hpp"
#include "kiln/core/error.hpp"

namespace kiln::internal {

namespace {

std::int64_t dim(const ShapeDims& dims, const char* name) {
  auto it = dims.find(name);
  return it == dims.end() ? 0 : it->second;
}

const char* cuda_type(DType dtype) {
  return dtype == DType::kBF16 ? "__nv_bfloat16" : "__half";
}

KernelTemplate row_template(const std::string& kernel, DType dtype, std::string description) {
  KernelTemplate t;
  t.name = kernel + "_" + dtype_name(dtype);
  t.description = std::move(description);
  t.source = std::string(embedded_template_file("cuda/" + kernel + ".cu"));
  t.headers = {{"kiln_row_common.cuh", std::string(embedded_template_file("cuda/row_common.cuh"))}};
  t.entry = "kiln::" + kernel + "<" + cuda_type(dtype) + ",{THREADS},{VEC},{ROWS}>";
  t.options = {"-std=c++17"};
  t.space.param("THREADS", {32, 64, 128, 256, 512, 1024})
      .param("VEC", {1, 2, 4, 8})
      .param("ROWS", {1, 2, 4});
  // A block is THREADS x ROWS threads: CUDA's limit is 1024.
  t.space.constraint("block<=1024", [](const Config& c) {
    return c.get_int("THREADS") * c.get_int("ROWS") <= 1024;
  });
  // 256 threads of 16-byte loads cover a 4096-wide fp16 row in two passes:
  // a good start for the hidden sizes of current models.
  t.space.default_config(
      Config{{"THREADS", std::int64_t{256}}, {"VEC", std::int64_t{8}}, {"ROWS", std::int64_t{1}}});
  (void)t.check();
  return t;
}

// grid = ceil(rows / ROWS), block = THREADS x ROWS; `width` (hidden or
// cols) must split into whole VEC-element vectors.
LaunchRule row_launch(const char* width) {
  return [width](const Config& c, const ArgList& args) {
    const std::int64_t rows = int_scalar(args, "rows"), w = int_scalar(args, width);
    if (w % c.get_int("VEC") != 0) {
      throw Error(ErrorCode::kInvalidArgument,
                  std::string(width) + "=" + std::to_string(w) +
                      " is not a multiple of VEC=" + std::to_string(c.get_int("VEC")));
    }
    LaunchGeometry g;
    g.grid = {grid_extent(rows, c.get_int("ROWS"), "grid.x (rows / ROWS)"), 1, 1};
    g.block = {static_cast<std::uint32_t>(c.get_int("THREADS")),
               static_cast<std::uint32_t>(c.get_int("ROWS")), 1};
    return g;
  };
}

ShippedKernel row_entry(std::string name, std::string family, DType dtype) {
  ShippedKernel k;
  k.name = std::move(name);
  k.family = std::move(family);
  k.backend = "cuda";
  k.dtypes = {dtype};
  k.check_shape = [](const ShapeDims&) { return ok_status(); };
  k.tolerance = [dtype](const ShapeDims&) { return Tolerance::for_dtype(dtype); };
  return k;
}

ShippedKernel rmsnorm_entry(DType dtype) {
  ShippedKernel k =
      row_entry(std::string("fused_add_rmsnorm_") + dtype_name(dtype), "fused_add_rmsnorm", dtype);
  k.description = cuda_rmsnorm_template(dtype).description;
  k.dims = {"rows", "hidden"};
  k.in_place = true;
  k.kernel = [dtype] {
    TunableKernel t;
    t.tmpl = cuda_rmsnorm_template(dtype);
    t.launch = row_launch("hidden");
    t.outputs = {"x", "residual"};
    t.restore_value = {"x", "residual"};  // in place: every run starts from the caller's
    return t;
  };
  k.args = [dtype](DType) {
    return std::vector<ArgSpec>{
        ArgSpec::tensor("x", dtype, {"rows", "hidden"}, ArgRole::kInOut),
        ArgSpec::tensor("residual", dtype, {"rows", "hidden"}, ArgRole::kInOut),
        ArgSpec::tensor("weight", dtype, {"hidden"}, ArgRole::kInput),
        ArgSpec::scalar("rows", ArgType::kI32, "rows"),
        ArgSpec::scalar("hidden", ArgType::kI32, "hidden"),
        ArgSpec::literal("eps", ArgType::kF32, 1e-6)};
  };
  k.reference = fused_add_rmsnorm_reference;
  k.flops = [](const ShapeDims& d) {
    return 4.0 * static_cast<double>(dim(d, "rows")) * static_cast<double>(dim(d, "hidden"));
  };
  k.bytes = [](const ShapeDims& d) {
    const double n = static_cast<double>(dim(d, "rows")) * static_cast<double>(dim(d, "hidden"));
    return 2.0 * (4.0 * n + static_cast<double>(dim(d, "hidden")));
  };
  return k;
}

ShippedKernel softmax_entry(DType dtype) {
  ShippedKernel k = row_entry(std::string("softmax_") + dtype_name(dtype), "softmax", dtype);
  k.description = cuda_softmax_template(dtype).description;
  k.dims = {"rows", "cols"};
  k.kernel = [dtype] {
    TunableKernel t;
    t.tmpl = cuda_softmax_template(dtype);
    t.launch = row_launch("cols");
    t.outputs = {"y"};
    return t;
  };
  k.args = [dtype](DType) {
    return std::vector<ArgSpec>{
        ArgSpec::tensor("x", dtype, {"rows", "cols"}, ArgRole::kInput),
        ArgSpec::tensor("y", dtype, {"rows", "cols"}, ArgRole::kOutput, ArgInit::kZeros),
        ArgSpec::scalar("rows", ArgType::kI32, "rows"),
        ArgSpec::scalar("cols", ArgType::kI32, "cols")};
  };
  k.reference = softmax_reference;
  k.flops = [](const ShapeDims& d) {
    return 5.0 * static_cast<double>(dim(d, "rows")) * static_cast<double>(dim(d, "cols"));
  };
  k.bytes = [](const ShapeDims& d) {
    return 4.0 * static_cast<double>(dim(d, "rows")) * static_cast<double>(dim(d, "cols"));
  };
  return k;
}

}  // namespace

KernelTemplate cuda_rmsnorm_template(DType dtype) {
  return row_template("fused_add_rmsnorm", dtype,
                      std::string("in-place fused residual add + RMSNorm, ") + dtype_name(dtype) +
                          " storage, fp32 accumulation (row per THREADS threads)");
}

KernelTemplate cuda_softmax_template(DType dtype) {
  return row_template("softmax", dtype,
                      std::string("row softmax, ") + dtype_name(dtype) +
                          " storage, fp32 math (row per THREADS threads)");
}

std::vector<ShippedKernel> cuda_row_kernels() {
  return {rmsnorm_entry(DType::kF16), rmsnorm_entry(DType::kBF16), softmax_entry(DType::kF16),
          softmax_entry(DType::kBF16)};
}

}  // namespace kiln::internal
