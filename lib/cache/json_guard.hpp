// Parsing JSON the caches did not necessarily write. nlohmann::json parses
// and destroys nested arrays and objects recursively: a file of a few MiB of
// '[' exhausts the stack and kills the process (measured: 2 million levels
// segfault). Every cache file is shallow, so text nested deeper than
// kMaxJsonDepth is refused before it reaches the parser.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace kiln::cache {

// Kiln's own cache JSON nests under 10 levels (file, records, record,
// measured configs, config, value).
inline constexpr int kMaxJsonDepth = 64;

// The deepest nesting of arrays and objects in `text` (brackets inside
// strings do not count); stops counting past `limit`.
int json_nesting_depth(std::string_view text, int limit = kMaxJsonDepth);

// Whether `json` is an object whose `key` holds `want`. A field of another
// type is just not equal: nlohmann's value(key, default) throws for it, so a
// file's "format": 1 would escape the reader as an exception, not a refusal.
inline bool field_equals(const nlohmann::json& json, const char* key, const nlohmann::json& want) {
  if (!json.is_object()) return false;
  const auto it = json.find(key);
  return it != json.end() && *it == want;
}

// Parses `text`, or returns a discarded value (is_discarded()) when it is
// not JSON or nests deeper than kMaxJsonDepth.
nlohmann::json parse_shallow_json(std::string_view text);

}  // namespace kiln::cache
