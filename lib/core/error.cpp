#include "kiln/core/error.hpp"

#include <algorithm>

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

std::string failure_gist(std::string_view described, std::size_t width) {
  auto trimmed = [](std::string_view line) {
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    return line;
  };
  const std::string_view message = trimmed(described.substr(0, described.find('\n')));
  std::string gist(message);
  const std::size_t details = std::min(described.find('\n'), described.size());
  if (const std::size_t at = described.find("error:", details); at != std::string_view::npos) {
    const std::size_t begin = described.rfind('\n', at) + 1;
    const std::size_t end = std::min(described.find('\n', at), described.size());
    gist = std::string(trimmed(described.substr(begin, end - begin))) + " (" + gist + ")";
  }
  std::replace(gist.begin(), gist.end(), '\n', ' ');
  if (gist.size() > width) gist = gist.substr(0, width > 3 ? width - 3 : 0) + "...";
  return gist;
}

Error::Error(ErrorInfo info) : std::runtime_error(info.describe()), info_(std::move(info)) {}

Error::Error(ErrorCode code, std::string message)
    : Error(ErrorInfo{code, std::move(message), {}}) {}

}  // namespace kiln
