#include "kiln/core/config_space.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include "kiln/core/error.hpp"

namespace kiln {

namespace {

[[noreturn]] void misuse(std::string message) {
  throw Error(ErrorCode::kInvalidArgument, std::move(message));
}

std::string list_text(const std::vector<Value>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += value_text(values[i]);
  }
  return out + "]";
}

}  // namespace

ConfigSpace& ConfigSpace::param(std::string name, std::vector<Value> values) {
  if (name.empty()) misuse("a config-space parameter needs a non-empty name");
  if (find(name))
    misuse("parameter '" + name + "' is declared twice: give each parameter one list");
  if (values.empty()) {
    misuse("parameter '" + name + "' has an empty value list: give it at least one value");
  }
  ValueType type = value_type(values.front());
  std::set<Value> seen;
  for (const Value& v : values) {
    if (value_type(v) != type) {
      misuse("parameter '" + name + "' mixes " + value_type_name(type) + " and " +
             value_type_name(value_type(v)) + " values in " + list_text(values) +
             ": use one type per parameter");
    }
    if (!seen.insert(v).second) {
      misuse("parameter '" + name + "' lists " + value_text(v) + " twice in " + list_text(values));
    }
  }
  params_.push_back(Parameter{std::move(name), type, std::move(values)});
  return *this;
}

ConfigSpace& ConfigSpace::param(std::string name, std::initializer_list<int> values) {
  std::vector<Value> list;
  for (int v : values) list.emplace_back(std::int64_t{v});
  return param(std::move(name), std::move(list));
}

ConfigSpace& ConfigSpace::param(std::string name, std::initializer_list<std::int64_t> values) {
  std::vector<Value> list;
  for (std::int64_t v : values) list.emplace_back(v);
  return param(std::move(name), std::move(list));
}

ConfigSpace& ConfigSpace::param(std::string name, std::initializer_list<bool> values) {
  std::vector<Value> list;
  for (bool v : values) list.emplace_back(v);
  return param(std::move(name), std::move(list));
}

ConfigSpace& ConfigSpace::param(std::string name, std::initializer_list<const char*> values) {
  std::vector<Value> list;
  for (const char* v : values) list.emplace_back(std::string(v));
  return param(std::move(name), std::move(list));
}

ConfigSpace& ConfigSpace::constraint(std::string name,
                                     std::function<bool(const Config&)> predicate) {
  if (name.empty()) misuse("a constraint needs a name, shown when a config violates it");
  if (!predicate) misuse("constraint '" + name + "' has no predicate");
  for (const auto& c : constraints_) {
    if (c.name == name) misuse("constraint '" + name + "' is declared twice");
  }
  constraints_.push_back(Constraint{std::move(name), std::move(predicate)});
  return *this;
}

ConfigSpace& ConfigSpace::device_constraint(std::string name, DeviceConstraintFn predicate) {
  if (name.empty()) misuse("a device constraint needs a name, shown when a config violates it");
  if (!predicate) misuse("device constraint '" + name + "' has no predicate");
  if (device_) {
    misuse("device constraint '" + name + "' added to a space already bound to " + device_->name +
           ": declare device constraints before for_device()");
  }
  for (const auto& c : device_constraints_) {
    if (c.name == name) misuse("device constraint '" + name + "' is declared twice");
  }
  device_constraints_.push_back(DeviceConstraint{std::move(name), std::move(predicate)});
  return *this;
}

ConfigSpace ConfigSpace::for_device(const DeviceTraits& device) const {
  if (device_) {
    misuse("the space is already bound to device " + device_->summary() +
           ": bind the unbound space (the template made without a device) instead");
  }
  ConfigSpace out = *this;
  out.device_constraints_.clear();
  out.device_ = device;
  for (const auto& c : device_constraints_) {
    out.constraint(c.name, [predicate = c.predicate, device](const Config& config) {
      return predicate(config, device);
    });
  }
  // A default chosen before binding must still hold on this device.
  if (out.default_ && !out.violated(*out.default_).empty()) {
    misuse("default config {" + out.default_->to_string() + "} violates constraint '" +
           out.violated(*out.default_).front() + "' on device " + device.summary() +
           ": set the default after for_device(), chosen for the device");
  }
  return out;
}

void ConfigSpace::require_bound() const {
  if (device_constraints_.empty()) return;
  misuse("constraint '" + device_constraints_.front().name +
         "' reads the device, and this space is not bound to one: use "
         "space.for_device(traits) (kiln::cpu::host_traits() for this CPU)");
}

ConfigSpace& ConfigSpace::default_config(Config config) {
  check_members(config);
  auto broken = violated(config);
  if (!broken.empty()) {
    misuse("default config {" + config.to_string() + "} violates constraint '" + broken.front() +
           "': pick a default inside the space");
  }
  default_ = std::move(config);
  return *this;
}

const Parameter* ConfigSpace::find(std::string_view name) const {
  for (const auto& p : params_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::uint64_t ConfigSpace::cartesian_size() const {
  if (params_.empty()) return 0;
  std::uint64_t n = 1;
  for (const auto& p : params_) {
    if (n > std::numeric_limits<std::uint64_t>::max() / p.values.size()) {
      return std::numeric_limits<std::uint64_t>::max();  // saturate: too large to enumerate anyway
    }
    n *= p.values.size();
  }
  return n;
}

Config ConfigSpace::config_at(std::uint64_t index) const {
  if (index >= cartesian_size()) {
    misuse("config index " + std::to_string(index) + " is outside a space of " +
           std::to_string(cartesian_size()) + " configs");
  }
  Config config;
  // Last declared parameter varies fastest, as in enumerate().
  for (auto it = params_.rbegin(); it != params_.rend(); ++it) {
    config.set(it->name, it->values[index % it->values.size()]);
    index /= it->values.size();
  }
  return config;
}

bool ConfigSpace::satisfies(const Config& config) const {
  require_bound();
  return std::all_of(constraints_.begin(), constraints_.end(),
                     [&](const Constraint& c) { return c.predicate(config); });
}

void ConfigSpace::visit(const std::function<bool(const Config&)>& each) const {
  if (params_.empty()) return;
  std::vector<std::size_t> digits(params_.size(), 0);
  Config config;
  for (const auto& p : params_) config.set(p.name, p.values[0]);
  while (true) {
    if (!each(config)) return;
    // Odometer increment, last parameter fastest.
    std::size_t i = params_.size();
    while (i > 0) {
      --i;
      if (++digits[i] < params_[i].values.size()) {
        config.set(params_[i].name, params_[i].values[digits[i]]);
        break;
      }
      digits[i] = 0;
      config.set(params_[i].name, params_[i].values[0]);
      if (i == 0) return;
    }
  }
}

std::vector<Config> ConfigSpace::filter(const std::function<bool(const Config&)>& keep) const {
  std::vector<Config> out;
  visit([&](const Config& c) {
    if (satisfies(c) && (!keep || keep(c))) out.push_back(c);
    return true;
  });
  return out;
}

std::optional<Config> ConfigSpace::first_where(const std::function<bool(const Config&)>& keep,
                                               std::uint64_t max_scan) const {
  std::optional<Config> found;
  std::uint64_t seen = 0;
  visit([&](const Config& c) {
    if (satisfies(c) && (!keep || keep(c))) found = c;
    return !found && ++seen < max_scan;
  });
  return found;
}

std::vector<Config> ConfigSpace::enumerate() const {
  return filter(nullptr);
}

std::uint64_t ConfigSpace::size() const {
  return enumerate().size();
}

void ConfigSpace::check_members(const Config& config) const {
  for (const auto& [name, value] : config.values()) {
    const Parameter* p = find(name);
    if (!p) {
      std::string known;
      for (const auto& q : params_) known += (known.empty() ? "" : ", ") + q.name;
      misuse("config {" + config.to_string() + "} names unknown parameter '" + name +
             "': the space has " + (known.empty() ? "no parameters" : known));
    }
    if (std::find(p->values.begin(), p->values.end(), value) == p->values.end()) {
      misuse("config {" + config.to_string() + "} sets '" + name + "' to " + value_text(value) +
             ", outside its values " + list_text(p->values));
    }
  }
  for (const auto& p : params_) {
    if (!config.has(p.name)) {
      misuse("config {" + config.to_string() + "} is missing parameter '" + p.name +
             "': give it one of " + list_text(p.values));
    }
  }
}

std::vector<std::string> ConfigSpace::violated(const Config& config) const {
  require_bound();
  std::vector<std::string> out;
  for (const auto& c : constraints_) {
    if (!c.predicate(config)) out.push_back(c.name);
  }
  return out;
}

bool ConfigSpace::contains(const Config& config) const {
  try {
    check_members(config);
  } catch (const Error&) {
    return false;
  }
  return satisfies(config);
}

Config ConfigSpace::default_config() const {
  if (default_) return *default_;
  // NOTES: the first valid config in odometer order, found by scanning, not
  // by enumerating: a space of 10^18 configs has its default at once.
  if (auto first = first_where(nullptr, kDefaultScanLimit)) return *first;
  const std::uint64_t total = cartesian_size();
  if (total > kDefaultScanLimit) {
    misuse("none of the first " + std::to_string(kDefaultScanLimit) + " of " +
           std::to_string(total) +
           " configs satisfies every constraint, so there is no heuristic default: set one "
           "explicitly (ConfigSpace::default_config, or \"default\" in a spec file)");
  }
  misuse("the config space has no config that satisfies every constraint (" +
         std::to_string(total) + " candidates): relax a constraint or add values");
}

}  // namespace kiln
