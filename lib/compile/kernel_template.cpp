// Placeholder parsing and specialisation of kernel templates.
#include <algorithm>
#include <set>

#include "kiln/compile/kernel.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"

namespace kiln {

namespace {

[[noreturn]] void bad_pattern(std::string_view pattern, std::size_t offset, std::string_view what) {
  throw Error(ErrorCode::kInvalidArgument, "pattern '" + std::string(pattern) + "' at offset " +
                                               std::to_string(offset) + ": " + std::string(what) +
                                               " (write {{ or }} for a literal brace)");
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Every pattern of a template, labelled for error messages.
std::vector<std::pair<std::string, std::string>> patterns_of(const KernelTemplate& t) {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("entry", t.entry);
  for (const auto& [name, value] : t.defines) out.emplace_back("define " + name, value);
  for (const auto& option : t.options) out.emplace_back("option", option);
  return out;
}

}  // namespace

std::vector<Placeholder> parse_placeholders(std::string_view pattern) {
  std::vector<Placeholder> out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '}') {
      if (i + 1 < pattern.size() && pattern[i + 1] == '}') {
        ++i;
        continue;
      }
      bad_pattern(pattern, i, "'}' closes no placeholder");
    }
    if (c != '{') continue;
    if (i + 1 < pattern.size() && pattern[i + 1] == '{') {
      ++i;
      continue;
    }
    const std::size_t close = pattern.find('}', i + 1);
    if (close == std::string_view::npos) bad_pattern(pattern, i, "'{' is never closed");
    std::string_view name = pattern.substr(i + 1, close - i - 1);
    if (!is_identifier(name)) {
      bad_pattern(
          pattern, i,
          "placeholder '{" + std::string(name) + "}' is not a parameter name (a C identifier)");
    }
    out.push_back({std::string(name), i, close - i + 1});
    i = close;
  }
  return out;
}

std::string substitute(std::string_view pattern, const Config& config) {
  // Literal text between placeholders, with `{{`/`}}` turned into one brace.
  auto literal = [](std::string& out, std::string_view text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
      out.push_back(text[i]);
      if ((text[i] == '{' || text[i] == '}') && i + 1 < text.size() && text[i + 1] == text[i]) ++i;
    }
  };
  std::string out;
  out.reserve(pattern.size() + 16);
  std::size_t at = 0;
  for (const Placeholder& p : parse_placeholders(pattern)) {
    literal(out, pattern.substr(at, p.offset - at));
    if (!config.has(p.name)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "placeholder {" + p.name + "} in '" + std::string(pattern) +
                      "' has no value in config {" + config.to_string() + "}: add parameter '" +
                      p.name + "' to the config space");
    }
    out.append(value_text(config.at(p.name)));
    at = p.offset + p.length;
  }
  literal(out, pattern.substr(at));
  return out;
}

std::vector<std::string> KernelTemplate::check() const {
  if (name.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "kernel template has no name: set KernelTemplate::name");
  }
  if (entry.empty()) {
    throw Error(
        ErrorCode::kInvalidArgument,
        "kernel template '" + name + "' has no entry expression: set KernelTemplate::entry");
  }
  std::set<std::string> used;
  for (const auto& [where, pattern] : patterns_of(*this)) {
    for (const Placeholder& p : parse_placeholders(pattern)) {
      if (space.find(p.name) == nullptr) {
        throw Error(ErrorCode::kInvalidArgument,
                    "kernel template '" + name + "': placeholder {" + p.name + "} in " + where +
                        " '" + pattern + "' names no parameter of its config space: add it with " +
                        "space.param(\"" + p.name + "\", ...) or fix the spelling");
      }
      used.insert(p.name);
    }
  }
  std::vector<std::string> unused;
  for (const Parameter& param : space.parameters()) {
    if (!used.count(param.name)) unused.push_back(param.name);
  }
  return unused;
}

Specialization KernelTemplate::specialize(const Config& config) const {
  const std::vector<std::string> unused = check();
  if (!unused.empty()) {
    std::string names;
    for (const auto& n : unused) names += (names.empty() ? "" : ", ") + n;
    log_once(LogLevel::kWarn, "kiln-unused-params:" + name,
             "kernel template '" + name + "': parameter(s) " + names +
                 " appear in no pattern (entry, defines, options); configs differing only in " +
                 "them compile to the same code");
  }
  try {
    space.check_members(config);
  } catch (const Error& e) {
    throw Error(ErrorCode::kInvalidArgument,
                "kernel template '" + name + "': config is outside its space: " + e.what());
  }
  const auto broken = space.violated(config);
  if (!broken.empty()) {
    std::string names;
    for (const auto& n : broken) names += (names.empty() ? "" : ", ") + n;
    throw Error(ErrorCode::kInvalidArgument, "kernel template '" + name + "': config {" +
                                                 config.to_string() + "} violates constraint(s) " +
                                                 names);
  }
  Specialization s;
  s.kernel = name;
  s.config = config;
  s.entry = substitute(entry, config);
  for (const auto& [define, pattern] : defines) s.defines[define] = substitute(pattern, config);
  for (const auto& option : options) s.options.push_back(substitute(option, config));
  return s;
}

std::vector<Specialization> KernelTemplate::specialize_all() const {
  std::vector<Specialization> out;
  for (const Config& c : space.enumerate()) out.push_back(specialize(c));
  return out;
}

}  // namespace kiln
