#include "kiln/core/log.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "kiln/core/options.hpp"

namespace kiln {

namespace {
// -1 until Options::global() has set the level from KILN_LOG_LEVEL.
std::atomic<int> g_level{-1};
std::mutex g_write_mutex;
}  // namespace

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kTrace:
      return "trace";
    case LogLevel::kOff:
      return "off";
  }
  return "unknown";
}

bool parse_log_level(std::string_view text, LogLevel* out) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "warning") lower = "warn";
  for (int i = 0; i <= static_cast<int>(LogLevel::kOff); ++i) {
    if (lower == log_level_name(static_cast<LogLevel>(i))) {
      *out = static_cast<LogLevel>(i);
      return true;
    }
  }
  return false;
}

void set_log_level(LogLevel level) {
  g_level.store(static_cast<int>(level));
}

LogLevel log_level() {
  int level = g_level.load();
  if (level < 0) {
    // Options::global() sets g_level inside its one-time initialisation
    // before anything is logged, so this cannot recurse.
    (void)Options::global();
    level = g_level.load();
  }
  return static_cast<LogLevel>(level);
}

bool log_enabled(LogLevel level) {
  LogLevel current = log_level();
  return current != LogLevel::kOff && level <= current;
}

void log_write(LogLevel level, std::string_view message) {
  std::string line = "[kiln ";
  line += log_level_name(level);
  line += "] ";
  line += message;
  line += '\n';
  std::lock_guard<std::mutex> lock(g_write_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void log_once(LogLevel level, std::string_view key, std::string_view message) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> seen;
  if (!log_enabled(level)) return;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!seen.emplace(key).second) return;
  }
  log_write(level, message);
}

}  // namespace kiln
