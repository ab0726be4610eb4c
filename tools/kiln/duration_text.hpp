// Durations as people read them: "12.3 us", "4.56 ms", "0.42 s" would read
// as 420 ms, "12.3 s", "1234 s". Shared by the tuning report and the
// simulated times of `kiln-lab bench search` (a sub-second time there printed
// as "0 s").
#pragma once

#include <cstdio>
#include <string>

namespace kiln::tool {

// Three significant digits in a readable unit; whole seconds from 100 s.
inline std::string duration_text(double seconds) {
  char buf[32];
  if (seconds == 0)
    std::snprintf(buf, sizeof buf, "0 s");
  else if (seconds < 1e-6)
    std::snprintf(buf, sizeof buf, "%.0f ns", seconds * 1e9);
  else if (seconds < 1e-3)
    std::snprintf(buf, sizeof buf, "%.3g us", seconds * 1e6);
  else if (seconds < 1)
    std::snprintf(buf, sizeof buf, "%.3g ms", seconds * 1e3);
  else if (seconds < 100)
    std::snprintf(buf, sizeof buf, "%.3g s", seconds);
  else
    std::snprintf(buf, sizeof buf, "%.0f s", seconds);
  return buf;
}

// How long ago, for a person: "40 s", "12 min", "5 h", "3 days".
inline std::string age_text(long long seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 120) return std::to_string(seconds) + " s";
  if (seconds < 2 * 3600) return std::to_string(seconds / 60) + " min";
  if (seconds < 2 * 86400) return std::to_string(seconds / 3600) + " h";
  return std::to_string(seconds / 86400) + " days";
}

}  // namespace kiln::tool
