// A kernel call described as data: each argument's name, type, shape (as
// integer expressions over the problem's dimensions) and initial contents.
// make_call() turns the description and a shape (M=512, N=512, K=512) into
// real device buffers filled with deterministic seeded data and the ArgList
// the tuner takes. Shipped kernels (kiln/kernels/shipped_kernels.hpp) and users'
// kernels (kiln/kernels/kernel_description.hpp) are both described this way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/device/device.hpp"
#include "kiln/kernels/int_expr.hpp"
#include "kiln/tuner/args.hpp"

namespace kiln {

// The problem's dimensions by name: "M" -> 512.
using ShapeDims = ExprVars;

enum class ArgRole { kInput, kOutput, kInOut };
enum class ArgInit { kRandom, kZeros, kOnes };
const char* arg_role_name(ArgRole role);  // "input", "output", "inout"
const char* arg_init_name(ArgInit init);  // "random", "zeros", "ones"

struct TensorSpec {
  DType dtype = DType::kF32;
  std::vector<IntExpr> shape;  // row major, contiguous
  ArgRole role = ArgRole::kInput;
  ArgInit init = ArgInit::kRandom;
};

struct ScalarSpec {
  ArgType type = ArgType::kI32;  // kBool, kI32, kU32, kI64, kU64, kF32 or kF64
  // The value: an integer expression over the dims, or a literal number
  // (`literal`, used when `is_literal`; floats come this way).
  IntExpr value;
  bool is_literal = false;
  double literal = 0;
  bool in_key = true;  // enters the problem key (sizes do, an epsilon does not)
};

struct ArgSpec {
  std::string name;
  std::variant<TensorSpec, ScalarSpec> kind;

  bool is_tensor() const { return std::holds_alternative<TensorSpec>(kind); }
  const TensorSpec& tensor() const { return std::get<TensorSpec>(kind); }
  const ScalarSpec& scalar() const { return std::get<ScalarSpec>(kind); }

  static ArgSpec tensor(std::string name, DType dtype, std::vector<std::string> shape, ArgRole role,
                        ArgInit init = ArgInit::kRandom);
  static ArgSpec scalar(std::string name, ArgType type, std::string value_expr, bool in_key = true);
  static ArgSpec literal(std::string name, ArgType type, double value, bool in_key = false);
};

// The arguments of one call and the device memory behind its tensors.
// Move-only (it owns buffers); the ArgList points into them.
struct KernelCall {
  std::vector<Buffer> buffers;
  ArgList args;
};

// Every dimension the specs read, sorted.
std::vector<std::string> dims_used(const std::vector<ArgSpec>& specs);

// The tensor's shape for `dims`. Throws kiln::Error naming the argument when
// an expression fails or a dimension comes out negative.
std::vector<std::int64_t> eval_shape(const ArgSpec& spec, const ShapeDims& dims);

// The bytes the call's tensors need for `dims`, every size checked: each
// tensor's element count and byte size, their sum, and every integer
// scalar against its type (an i32 `M` of 2^31 is refused, never narrowed).
// Throws kiln::Error (kInvalidArgument) naming the argument, the dims it
// reads ("M=2147483648, K=8: M*K*4 bytes for tensor 'A' (f32) overflows
// ...") and the limit. Allocates nothing.
std::int64_t call_bytes(const std::vector<ArgSpec>& specs, const ShapeDims& dims);

// Allocates and fills every tensor on `device` (random: uniform in [-1, 1)
// for floating types and small integers otherwise, from `seed` and the
// argument's name, the same on every run and machine). Before allocating
// anything it checks the sizes (call_bytes) and that the tensors together
// fit the device's total memory. Every failure comes back as a value:
// kInvalidArgument for a spec that cannot be evaluated or a problem too
// large (naming the dims and the limit), device errors as they are.
Result<KernelCall> make_call(Device& device, const std::vector<ArgSpec>& specs,
                             const ShapeDims& dims, std::uint64_t seed);

// The description as JSON (for `kiln kernels --json` and reports).
nlohmann::json arg_specs_to_json(const std::vector<ArgSpec>& specs);

}  // namespace kiln
