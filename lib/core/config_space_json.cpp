// JSON form of a ConfigSpace:
//   {"parameters": [{"name": "BM", "type": "int", "values": [64, 128]}, ...],
//    "constraints": ["smem", ...], "default": {"BM": 64, ...}}
#include <nlohmann/json.hpp>

#include "kiln/core/config_space.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

nlohmann::json ConfigSpace::to_json() const {
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : params_) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& v : p.values) values.push_back(value_to_json(v));
    params.push_back({{"name", p.name}, {"type", value_type_name(p.type)}, {"values", values}});
  }
  nlohmann::json constraints = nlohmann::json::array();
  for (const auto& c : constraints_) constraints.push_back(c.name);
  nlohmann::json out = {{"parameters", params}, {"constraints", constraints}};
  if (default_) out["default"] = default_->to_json();
  // Unbound device constraints are named too, and a bound space carries its
  // device: the same template makes a different space on another machine.
  if (!device_constraints_.empty()) {
    nlohmann::json names = nlohmann::json::array();
    for (const auto& c : device_constraints_) names.push_back(c.name);
    out["device_constraints"] = names;
  }
  if (device_) out["device"] = device_->summary();
  return out;
}

ConfigSpace ConfigSpace::from_json(const nlohmann::json& json, const ConstraintRegistry& registry) {
  auto bad = [](const std::string& what) {
    throw Error(ErrorCode::kInvalidArgument, "config-space JSON: " + what);
  };
  if (!json.is_object()) bad("expected an object with \"parameters\", got " + json.dump());
  auto params = json.find("parameters");
  if (params == json.end() || !params->is_array()) bad("\"parameters\" must be an array");
  ConfigSpace space;
  for (const auto& p : *params) {
    if (!p.is_object() || !p.contains("name") || !p["name"].is_string() || !p.contains("values") ||
        !p["values"].is_array()) {
      bad("each parameter needs a string \"name\" and an array \"values\", got " + p.dump());
    }
    std::string name = p["name"].get<std::string>();
    std::vector<Value> values;
    for (const auto& v : p["values"]) values.push_back(value_from_json(v, name));
    space.param(name, std::move(values));
    if (p.contains("type") && p["type"] != value_type_name(space.params_.back().type)) {
      bad("parameter '" + name + "' declares type " + p["type"].dump() + " but its values are " +
          value_type_name(space.params_.back().type));
    }
  }
  if (auto cs = json.find("constraints"); cs != json.end()) {
    if (!cs->is_array()) bad("\"constraints\" must be an array of names");
    for (const auto& c : *cs) {
      if (!c.is_string()) bad("constraint names must be strings, got " + c.dump());
      auto name = c.get<std::string>();
      auto it = registry.find(name);
      if (it == registry.end()) {
        bad("constraint '" + name + "' has no predicate registered: pass it in the registry");
      }
      space.constraint(name, it->second);
    }
  }
  if (auto d = json.find("default"); d != json.end()) space.default_config(Config::from_json(*d));
  return space;
}

}  // namespace kiln
