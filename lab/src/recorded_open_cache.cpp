// A Kernel Tuner cache file left open, closed (recorded_open_cache.hpp).
#include "recorded_open_cache.hpp"

namespace kiln::detail {

std::vector<std::string> closed_cache_texts(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  const std::size_t cache = s.find("\"cache\"");
  if (s.empty() || s.front() != '{' || cache == std::string_view::npos) return {};
  const std::size_t open = s.find('{', cache);
  if (open == std::string_view::npos) return {};
  // Closed already: whatever stops it parsing is not the missing braces.
  if (s.size() >= 3 && (s.substr(s.size() - 3) == "}\n}" || s.substr(s.size() - 3) == "}}}"))
    return {};
  auto closed = [](std::string_view body) {
    if (!body.empty() && body.back() == ',') body.remove_suffix(1);
    return std::string(body) + "}\n}";
  };
  std::vector<std::string> out;
  // Between two records, after the header alone, or after a whole record
  // whose comma was not written yet.
  if (s.back() == ',' || s.back() == '}' || s.size() == open + 1) out.push_back(closed(s));
  // A record cut off mid-line: keep the records before it. Every record
  // but the last is followed by ",\n"; the header's own "},\n" (its
  // parameter lists) lies before the cache's brace.
  const std::size_t last = s.rfind("},\n");
  out.push_back(closed(last == std::string_view::npos || last < open ? s.substr(0, open + 1)
                                                                     : s.substr(0, last + 2)));
  return out;
}

}  // namespace kiln::detail
