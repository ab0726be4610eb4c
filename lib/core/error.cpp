#include "kiln/core/error.hpp"

namespace kiln {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kCompileFailed:
      return "compile_failed";
    case ErrorCode::kLaunchFailed:
      return "launch_failed";
    case ErrorCode::kCorrupt:
      return "corrupt";
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kCancelled:
      return "cancelled";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

std::string ErrorInfo::describe() const {
  std::string out = message;
  for (const auto& [key, value] : details) {
    out += "\n  ";
    out += key;
    out += ": ";
    // Multi-line details (compiler logs) are indented under their key.
    for (char c : value) {
      out += c;
      if (c == '\n') out += "    ";
    }
  }
  return out;
}

Error::Error(ErrorInfo info) : std::runtime_error(info.describe()), info_(std::move(info)) {}

Error::Error(ErrorCode code, std::string message)
    : Error(ErrorInfo{code, std::move(message), {}}) {}

}  // namespace kiln
