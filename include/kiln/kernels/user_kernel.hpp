// A user's own kernel, described by a JSON file next to its template
// source: the config space, the launch rule, the arguments of a call, what
// to check, for CUDA or the CPU. `kiln tune --template FILE --space
// FILE.json --entry EXPR` tunes it like a shipped kernel. The format is
// documented, with a worked example, in docs/user-kernels.md.
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

struct UserKernel {
  std::string backend = "cpu";
  KernelTemplate tmpl;            // source, entry, space, defines, options
  std::vector<std::string> dims;  // shape parameters --shape must give, sorted
  std::vector<ArgSpec> args;      // the call, in parameter order
  std::vector<std::string> outputs, restore_value, reset_to_zero;
  // Launch rule, over dims and integer/bool config parameters.
  IntExpr grid[3], block[3];
  IntExpr shared_bytes;
  std::vector<IntExpr> early_prune;  // a config is kept when every one is non-zero
  ReferenceKind reference = ReferenceKind::kDefaultConfig;
  std::optional<Tolerance> tolerance;
  // Of the whole spec's canonical JSON (launch rule, args, prunes,
  // everything): tunable() makes it the kernel's `version`, so an edited
  // spec changes the definition hash and is tuned again.
  Hash128 spec_hash;

  // The tunable kernel for a call of `shape` (the launch rule and the early
  // prune read its dims).
  TunableKernel tunable(const ShapeDims& shape) const;
};

// Reads a spec. `source` is the template's text, `entry` the entry
// expression with placeholders (empty: the spec's "entry"), `name` the
// kernel's name when the spec has none. Throws kiln::Error
// (kInvalidArgument) naming the field, what is wrong and the fix.
UserKernel parse_user_kernel(const nlohmann::json& spec, std::string source, std::string entry,
                             std::string name);

// Reads both files, then parse_user_kernel: kNotFound for a file it cannot
// read, kInvalidArgument for a spec that is not valid JSON or breaks a
// rule, each naming the path. The kernel's name defaults to the template
// file's stem; the template's directory is on its include path.
Result<UserKernel> load_user_kernel(const std::filesystem::path& template_file,
                                    const std::filesystem::path& spec_file,
                                    const std::string& entry);

}  // namespace kiln
