// Config: one point of a kernel's configuration space, as named typed values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json_fwd.hpp>

namespace kiln {

// A parameter value: an integer (tile sizes, stages), a flag, or a word.
using Value = std::variant<std::int64_t, bool, std::string>;

enum class ValueType { kInt, kBool, kString };

ValueType value_type(const Value& value);
const char* value_type_name(ValueType type);
// "64", "true", "row_major": the text a template placeholder is replaced by.
std::string value_text(const Value& value);
nlohmann::json value_to_json(const Value& value);
// Throws kiln::Error (invalid_argument) for JSON that is not an integer,
// bool or string; `what` names the field in the message.
Value value_from_json(const nlohmann::json& json, std::string_view what);

class Config {
 public:
  Config() = default;
  Config(std::initializer_list<std::pair<const std::string, Value>> values) : values_(values) {}

  Config& set(std::string name, Value value);
  bool has(std::string_view name) const;
  // Throws kiln::Error naming the parameter when it is absent or of another type.
  const Value& at(std::string_view name) const;
  std::int64_t get_int(std::string_view name) const;
  bool get_bool(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;

  const std::map<std::string, Value, std::less<>>& values() const { return values_; }
  std::size_t size() const { return values_.size(); }

  // "BK=32,BM=64,STAGES=3": parameters sorted by name; stable across runs.
  // For people: {s: "a,b=c"} and {s: "a", b: "c"} read the same here.
  std::string to_string() const;
  // The config's identity as text, for maps and sets keyed by config:
  // to_string() with '\', ',', '=' and '"' escaped by a backslash, and a
  // string value that reads as an int or bool ("1", "true") in quotes, so
  // two configs share a key only when they are equal. The same as
  // to_string() for a config without those characters or string values.
  std::string key() const;
  nlohmann::json to_json() const;
  static Config from_json(const nlohmann::json& json);

  bool operator==(const Config&) const = default;
  bool operator<(const Config& other) const { return values_ < other.values_; }

 private:
  std::map<std::string, Value, std::less<>> values_;
};

}  // namespace kiln
