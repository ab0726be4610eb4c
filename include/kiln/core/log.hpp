// Leveled logging to stderr. The level comes from KILN_LOG_LEVEL (through
// Options, read once) and can be changed at run time.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace kiln {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3, kTrace = 4, kOff = 5 };

const char* log_level_name(LogLevel level);
// Accepts error, warn, info, debug, trace, off (any case); nullopt-like
// failure is reported by returning false.
bool parse_log_level(std::string_view text, LogLevel* out);

void set_log_level(LogLevel level);
LogLevel log_level();
bool log_enabled(LogLevel level);
// Writes one whole line; lines from different threads never interleave.
void log_write(LogLevel level, std::string_view message);
// Logs `message` only the first time `key` is seen in this process: for
// conditions that would otherwise repeat on every call (a stale cache record).
void log_once(LogLevel level, std::string_view key, std::string_view message);

// Collects one log line through operator<< and writes it when destroyed.
class LogLine {
 public:
  explicit LogLine(LogLevel level) : level_(level) {}
  ~LogLine() { log_write(level_, stream_.str()); }
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;
  std::ostringstream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};

}  // namespace kiln

// KILN_LOG(kWarn) << "text " << value;  The stream is not built when the
// level is disabled. A one-pass for-loop rather than if/else, so that
// `if (x) KILN_LOG(kWarn) << ...;` has no dangling else.
#define KILN_LOG(level)                                                                \
  for (bool kiln_log_go_ = ::kiln::log_enabled(::kiln::LogLevel::level); kiln_log_go_; \
       kiln_log_go_ = false)                                                           \
  ::kiln::LogLine(::kiln::LogLevel::level).stream()
