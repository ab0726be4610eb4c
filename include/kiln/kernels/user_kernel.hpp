// A user's own kernel, described by a JSON file next to its template
// source: the config space, the launch rule, the arguments of a call, what
// to check, for CUDA or the CPU. `kiln tune --template FILE --space
// FILE.json --entry EXPR` tunes it like a shipped kernel. The format is
// documented, with a worked example, in docs/user-kernels.md.
#pragma once

#include <filesystem>
#include <string>

#include "kiln/kernels/kernel_description.hpp"

namespace kiln {

// Reads both files, then describe_kernel (kernel_description.hpp):
// kNotFound for a file it cannot read, kInvalidArgument for a spec that is
// not valid JSON or breaks a rule, each naming the path. The kernel's name
// defaults to the template file's stem; include_dirs are relative to the
// spec file.
Result<KernelDescription> load_user_kernel(const std::filesystem::path& template_file,
                                           const std::filesystem::path& spec_file,
                                           const std::string& entry);

}  // namespace kiln
