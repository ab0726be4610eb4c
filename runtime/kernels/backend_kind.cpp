// Backend names. Apart from tuning_target.cpp so that code naming a backend
// (a user kernel's spec) does not pull the backends' compilers into a link.
#include "kiln/kernels/tuning_target.hpp"

namespace kiln {

const char* backend_kind_name(BackendKind kind) {
  return kind == BackendKind::kCuda ? "cuda" : "cpu";
}

std::optional<BackendKind> parse_backend_kind(std::string_view name) {
  if (name == "cpu") return BackendKind::kCpu;
  if (name == "cuda") return BackendKind::kCuda;
  return std::nullopt;
}

}  // namespace kiln
