#include "kiln/core/config.hpp"

#include <charconv>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"

namespace kiln {

ValueType value_type(const Value& value) {
  return static_cast<ValueType>(value.index());
}

const char* value_type_name(ValueType type) {
  switch (type) {
    case ValueType::kInt:
      return "int";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
  }
  return "unknown";
}

std::string value_text(const Value& value) {
  if (auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  return std::get<std::string>(value);
}

nlohmann::json value_to_json(const Value& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

Value value_from_json(const nlohmann::json& json, std::string_view what) {
  if (json.is_boolean()) return json.get<bool>();
  if (json.is_number_integer()) return json.get<std::int64_t>();
  if (json.is_string()) return json.get<std::string>();
  throw Error(ErrorCode::kInvalidArgument,
              "value of '" + std::string(what) + "' is " + json.dump() +
                  ": config values must be integers, booleans or strings");
}

Config& Config::set(std::string name, Value value) {
  values_.insert_or_assign(std::move(name), std::move(value));
  return *this;
}

bool Config::has(std::string_view name) const {
  return values_.find(name) != values_.end();
}

const Value& Config::at(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) {
    throw Error(ErrorCode::kInvalidArgument, "config {" + to_string() + "} has no parameter '" +
                                                 std::string(name) +
                                                 "': add it to the config or the space");
  }
  return it->second;
}

namespace {
template <class T>
const T& typed(const Config& config, std::string_view name, ValueType want) {
  const Value& v = config.at(name);
  if (auto* p = std::get_if<T>(&v)) return *p;
  throw Error(ErrorCode::kInvalidArgument, "parameter '" + std::string(name) + "' is " +
                                               value_type_name(value_type(v)) + " (" +
                                               value_text(v) + "), not " + value_type_name(want));
}
}  // namespace

std::int64_t Config::get_int(std::string_view name) const {
  return typed<std::int64_t>(*this, name, ValueType::kInt);
}
bool Config::get_bool(std::string_view name) const {
  return typed<bool>(*this, name, ValueType::kBool);
}
const std::string& Config::get_string(std::string_view name) const {
  return typed<std::string>(*this, name, ValueType::kString);
}

std::string Config::to_string() const {
  std::string out;
  for (const auto& [name, value] : values_) {
    if (!out.empty()) out += ',';
    out += name;
    out += '=';
    out += value_text(value);
  }
  return out;
}

namespace {

// A string value that value_text() of an int or bool would also give.
bool reads_as_other_type(const std::string& text) {
  if (text == "true" || text == "false") return true;
  std::int64_t n = 0;
  const char* end = text.data() + text.size();
  auto [at, ec] = std::from_chars(text.data(), end, n);
  return ec == std::errc() && at == end && std::to_string(n) == text;
}

void append_escaped(std::string& out, std::string_view text) {
  for (char c : text) {
    if (c == '\\' || c == ',' || c == '=' || c == '"') out += '\\';
    out += c;
  }
}

}  // namespace

std::string Config::key() const {
  std::string out;
  for (const auto& [name, value] : values_) {
    if (!out.empty()) out += ',';
    append_escaped(out, name);
    out += '=';
    const auto* text = std::get_if<std::string>(&value);
    if (!text) {
      out += value_text(value);  // digits, '-', or true/false: nothing to escape
    } else if (reads_as_other_type(*text)) {
      out += '"' + *text + '"';
    } else {
      append_escaped(out, *text);
    }
  }
  return out;
}

nlohmann::json Config::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : values_) out[name] = value_to_json(value);
  return out;
}

Config Config::from_json(const nlohmann::json& json) {
  if (!json.is_object()) {
    throw Error(ErrorCode::kInvalidArgument,
                "a config must be a JSON object of name: value, got " + json.dump());
  }
  Config config;
  for (const auto& [name, value] : json.items()) config.set(name, value_from_json(value, name));
  return config;
}

}  // namespace kiln
