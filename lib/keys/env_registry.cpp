#include <algorithm>
#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"
#include "kiln/core/options.hpp"

namespace kiln {

const std::vector<std::string>& CacheEnvRegistry::builtin_names() {
  // Kiln's own variables that change generated code. Must stay in step with
  // the fields of Options that feed a compiler (docs/caching.md lists them).
  static const std::vector<std::string> names = {"KILN_ARCH", "KILN_CPU_FLAGS", "KILN_NVRTC_FLAGS"};
  return names;
}

CacheEnvRegistry::CacheEnvRegistry() : names_(builtin_names()) {}

CacheEnvRegistry& CacheEnvRegistry::global() {
  static CacheEnvRegistry registry;
  return registry;
}

void CacheEnvRegistry::add(std::string name) {
  if (name.empty() || name.find('=') != std::string::npos) {
    throw Error(ErrorCode::kInvalidArgument,
                "cannot register environment variable '" + name +
                    "' as cache-invalidating: a name must be non-empty and contain no '='");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::lower_bound(names_.begin(), names_.end(), name);
  if (it == names_.end() || *it != name) names_.insert(it, std::move(name));
}

std::vector<std::string> CacheEnvRegistry::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return names_;
}

EnvSnapshot CacheEnvRegistry::snapshot(const Environment& env) const {
  EnvSnapshot snap;
  for (const auto& name : names()) snap.values.emplace_back(name, env.get(name));
  return snap;
}

Hash128 EnvSnapshot::hash() const {
  Hasher h;
  for (const auto& [name, value] : values) {
    h.field(name);
    // Unset and set-to-empty differ: a tag byte tells them apart.
    h.field(value ? "=" + *value : std::string("unset"));
  }
  return h.finish();
}

nlohmann::json EnvSnapshot::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : values)
    out[name] = value ? nlohmann::json(*value) : nlohmann::json();
  return out;
}

EnvSnapshot EnvSnapshot::from_json(const nlohmann::json& json) {
  if (!json.is_object()) {
    throw Error(
        ErrorCode::kInvalidArgument,
        "environment snapshot must be an object of name: value-or-null, got " + json.dump());
  }
  EnvSnapshot snap;
  for (const auto& [name, value] : json.items()) {
    if (value.is_null())
      snap.values.emplace_back(name, std::nullopt);
    else if (value.is_string())
      snap.values.emplace_back(name, value.get<std::string>());
    else
      throw Error(ErrorCode::kInvalidArgument,
                  "environment snapshot: '" + name + "' is not a string or null");
  }
  std::sort(snap.values.begin(), snap.values.end());
  return snap;
}

}  // namespace kiln
