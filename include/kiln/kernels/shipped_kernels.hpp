// The tunable kernels shipped with Kiln, ready to tune on a realistic call:
// each entry carries its TunableKernel (template, launch rule, outputs,
// in-place lists), the shape parameters it takes, its dtypes, the arguments
// of a call as data (kiln/kernels/kernel_call.hpp), and a host reference. `kiln
// tune --kernel NAME` and `kiln kernels` are built on this registry.
//
//   const ShippedKernel& k = find_shipped_kernel("gemm_f32");
//   auto call = make_call(device, k.args(DType::kF32), {{"M", 256}, ...}, 0);
//   tuner.tune(k.kernel(), call->args, device, options);
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/kernels/kernel_call.hpp"
#include "kiln/kernels/tuning_target.hpp"
#include "kiln/tuner/compare.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln {

struct ShippedKernel {
  std::string name;    // "gemm_f32": what --kernel takes
  std::string family;  // "gemm": kernels computing the same thing for other backends/dtypes
  std::string backend = "cpu";
  std::string description;
  std::vector<std::string> dims;  // shape parameters, in order: {"M", "N", "K"}
  std::vector<DType> dtypes;      // input dtypes it takes; the first is the default
  bool in_place = false;          // restores its inputs between runs (restore_value)

  // The tunable kernel; its launch rule reads the dims from the arguments.
  std::function<TunableKernel()> kernel;
  // The arguments of a call, in the kernel's parameter order.
  std::function<std::vector<ArgSpec>(DType)> args;
  // Whether the kernel can run this shape: kInvalidArgument naming the
  // problem and the fix otherwise ("N and K must be multiples of 8 ...").
  std::function<Status(const ShapeDims&)> check_shape;
  // Writes the exact outputs into the output arguments (host code).
  ReferenceFn reference;
  // Multiply-adds counted as 2: for GFLOP/s in reports, and to decide
  // whether the host reference is cheap enough to run.
  std::function<double(const ShapeDims&)> flops;
  // Bytes a run must move at least (inputs read once, outputs written once).
  std::function<double(const ShapeDims&)> bytes;
  // Tolerance of the check against the reference for this shape.
  std::function<Tolerance(const ShapeDims&)> tolerance;
};

// Every shipped kernel, in a stable order, whatever backends this build has
// (listed everywhere; tuning one needs its backend and a device, and says
// so when either is missing).
const std::vector<ShippedKernel>& shipped_kernels();

// By exact name; nullptr when there is none.
const ShippedKernel* find_shipped_kernel(std::string_view name);

// The kernel `--kernel NAME [--backend B] [--dtype D]` means: an exact name,
// or a family ("gemm") resolved by backend and dtype. Errors
// (kInvalidArgument, kNotFound) name the problem and list what would work.
Result<const ShippedKernel*> resolve_shipped_kernel(std::string_view name,
                                                    std::optional<std::string> backend,
                                                    std::optional<DType> dtype);

}  // namespace kiln
