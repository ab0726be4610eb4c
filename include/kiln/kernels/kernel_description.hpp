// A kernel's description: one value for every way a kernel is declared
// (a JSON spec next to a template file for `kiln tune`, a kiln.Kernel in
// Python, a C++ caller): source, entry, signature, space, launch rule,
// outputs, reference. One builder reads it from a JSON object in the
// format of docs/user-kernels.md, and one parser reads a signature, so
// every path checks a kernel the same way and fails with the same errors.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/kernels/int_expr.hpp"
#include "kiln/kernels/kernel_call.hpp"
#include "kiln/kernels/tuning_target.hpp"
#include "kiln/tuner/compare.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln {

// One parameter of a kernel, as its signature types it.
struct KernelParam {
  enum class Kind { kTensor, kScalar, kPointer };
  std::string name;
  Kind kind = Kind::kScalar;
  DType dtype = DType::kF32;       // kTensor: element type
  ArgType scalar = ArgType::kI32;  // kScalar: the C type
  std::string type_text;           // as written, less a leading const: "f32*", "i32"
  bool read_only = false;          // "const T*" (an input tensor): the kernel only reads it
};

// The one signature parser: ["a: f32", "x: const f32*", "n: i32",
// "ws: void*"]. Throws kiln::Error (kInvalidArgument) naming the entry and
// the types it knows.
std::vector<KernelParam> parse_signature(const std::vector<std::string>& entries);
// One parameter's type ("f32*", "const f32*", "i32", "void*"): the step
// of the parser that a JSON spec's "args" share (a tensor's dtype as "T*").
KernelParam parse_param(std::string name, std::string type);

// Integer expressions over the dims and the config's integer and bool
// parameters.
struct LaunchExprs {
  IntExpr grid[3], block[3];
  IntExpr shared_bytes;
};

struct KernelDescription {
  std::string backend = kHostBackend;  // a registered backend's name
  KernelTemplate tmpl;                 // source, entry, space, defines, options, headers
  std::vector<KernelParam> signature;  // in parameter order
  std::vector<ArgSpec> args;           // a call built from the dims ("args"); empty when
                                       // each call brings its arguments (Python)
  std::vector<std::string> dims;       // shape parameters a call must give, sorted
  std::vector<std::string> outputs, restore_value, reset_to_zero;
  std::optional<LaunchExprs> launch;  // none: the caller's own (Python's callables)
  std::vector<IntExpr> early_prune;   // a config is kept when every one is non-zero
  ReferenceKind reference = ReferenceKind::kDefaultConfig;
  std::optional<Tolerance> tolerance;
  // Of the whole spec's canonical JSON (launch rule, args, prunes,
  // everything): tunable() makes it the kernel's `version`, so an edited
  // spec changes the definition hash and is tuned again.
  Hash128 spec_hash;

  // The tunable kernel for a call of `shape` (the launch rule and the early
  // prune read its dims); kInvalidArgument without a launch rule.
  TunableKernel tunable(const ShapeDims& shape) const;
};

// The one builder. Reads `spec` (the format of docs/user-kernels.md);
// `source` is the template's text, `entry` the entry expression with
// placeholders (empty: the spec's "entry"), `name` the kernel's name when
// the spec has none. Throws kiln::Error (kInvalidArgument) naming the
// field, what is wrong and the fix.
KernelDescription describe_kernel(const nlohmann::json& spec, std::string source, std::string entry,
                                  std::string name);

// Throws kInvalidArgument unless every name of `names` is a parameter of
// `d` of `kinds` (tensors; tensors or raw pointers, whose bytes Kiln can
// hold; any), naming `field`, the name and those it could be.
enum class ParamKinds { kTensors, kBuffers, kAny };
void check_parameter_names(const KernelDescription& d, const std::vector<std::string>& names,
                           const char* field, ParamKinds kinds);

// The builder's step for the tensor lists, for callers that hold them
// apart (Python): checks each name against the signature; an absent
// `outputs` is every tensor the kernel may write (every tensor when all are
// read-only), an absent `restore_value` every inout argument of `args`.
void describe_tensor_lists(KernelDescription& d, std::optional<std::vector<std::string>> outputs,
                           std::optional<std::vector<std::string>> restore_value,
                           std::vector<std::string> reset_to_zero);

// A user's kernel from its files, for `kiln tune --template FILE --space
// FILE.json --entry EXPR`: reads both, then describe_kernel. kNotFound for
// a file it cannot read, kInvalidArgument for a spec that is not valid JSON
// or breaks a rule, each naming the path. The kernel's name defaults to
// the template file's stem; include_dirs are relative to the spec file.
Result<KernelDescription> load_user_kernel(const std::filesystem::path& template_file,
                                           const std::filesystem::path& spec_file,
                                           const std::string& entry);

}  // namespace kiln
