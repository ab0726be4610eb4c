// Errors: misuse of the API throws kiln::Error at the boundary; expected
// failures (a config that does not compile, a kernel that faults, a file
// that cannot be read) travel as values in Result<T> or Status carrying
// their evidence, so one never aborts a run. No other way: not an
// optional<ErrorInfo>, not a bool, not an empty string meaning fine, and a
// function that returns Result never throws for an expected failure.
// docs/errors.md says more.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace kiln {

enum class ErrorCode {
  kInvalidArgument,  // misuse: bad config, unknown parameter, bad option value
  kNotFound,         // a file, library, symbol or cache entry is missing
  kUnavailable,      // a backend or device is absent on this machine
  kCompileFailed,    // the compiler rejected a program (log attached)
  kLaunchFailed,     // a kernel failed to load or launch
  kCorrupt,          // a cache entry or file failed its checks
  kIo,               // the file system refused an operation
  kTimeout,          // a deadline passed
  kCancelled,        // the work was cancelled on request
  kInternal,         // a broken invariant inside Kiln
};

const char* error_code_name(ErrorCode code);

// The evidence of a failure: a code, a one-line message that names the
// problem and the fix, and named details (compiler log, options, config...).
struct ErrorInfo {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  std::map<std::string, std::string> details;

  // Message followed by every detail, for logs and exceptions.
  [[nodiscard]] std::string describe() const;
};

// A described failure (ErrorInfo::describe()) cut to `width` characters on
// one line, its most telling line first: a compiler's first "error:" line
// when the details hold one (then the message, in brackets), else the
// message. A plain cut keeps the message and the details before the log,
// and a compile failure's reason would end before its error.
[[nodiscard]] std::string failure_gist(std::string_view described, std::size_t width);

class Error : public std::runtime_error {
 public:
  explicit Error(ErrorInfo info);
  Error(ErrorCode code, std::string message);

  ErrorCode code() const { return info_.code; }
  const ErrorInfo& info() const { return info_; }

 private:
  ErrorInfo info_;
};

// A value or the evidence of why there is none. [[nodiscard]] so a failure
// cannot be dropped silently.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}          // NOLINT(implicit)
  Result(ErrorInfo error) : state_(std::move(error)) {}  // NOLINT(implicit)

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Throws kiln::Error with the stored evidence when there is no value.
  T& value() & {
    if (!ok()) throw Error(std::get<1>(state_));
    return std::get<0>(state_);
  }
  const T& value() const& {
    if (!ok()) throw Error(std::get<1>(state_));
    return std::get<0>(state_);
  }
  T&& value() && {
    if (!ok()) throw Error(std::get<1>(state_));
    return std::get<0>(std::move(state_));
  }
  const ErrorInfo& error() const { return std::get<1>(state_); }

  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, ErrorInfo> state_;
};

// Shorthand for building an ErrorInfo.
[[nodiscard]] inline ErrorInfo make_error(ErrorCode code, std::string message,
                                          std::map<std::string, std::string> details = {}) {
  return ErrorInfo{code, std::move(message), std::move(details)};
}

// The value of an operation that returns nothing but may fail.
struct Done {};
using Status = Result<Done>;
[[nodiscard]] inline Status ok_status() {
  return Done{};
}

}  // namespace kiln
