// Reading a call's output tensors back as doubles, for comparisons
// (cross-backend validation, output checks while tuning).
#pragma once

#include <string>
#include <vector>

#include "kiln/tuner/args.hpp"

namespace kiln::internal {

// The named tensors of `args`, widened to double; read through `device`
// (null: the pointers are host memory). Throws kiln::Error for an unknown
// name (misuse); a failed copy is an error value.
Result<std::vector<std::vector<double>>> read_outputs(const ArgList& args,
                                                      const std::vector<std::string>& names,
                                                      Device* device);

}  // namespace kiln::internal
