// ConfigSpace: the named parameters a kernel template takes, the values each
// may have, the constraints a config must satisfy, and a heuristic default.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/core/config.hpp"
#include "kiln/core/device_traits.hpp"

namespace kiln {

struct Parameter {
  std::string name;
  ValueType type = ValueType::kInt;
  std::vector<Value> values;  // in declaration order; enumeration follows it
};

struct Constraint {
  std::string name;  // shown when a config violates it, e.g. "smem<=228KiB"
  std::function<bool(const Config&)> predicate;
};

// A constraint that reads the device as well as the config: "the micro-tile
// fits the vector registers", "the packed panel fits L1". It applies once the
// space is bound to a device (ConfigSpace::for_device).
using DeviceConstraintFn = std::function<bool(const Config&, const DeviceTraits&)>;
struct DeviceConstraint {
  std::string name;
  DeviceConstraintFn predicate;
};

// Predicates looked up by name when a space is read back from JSON (a
// function cannot be serialised; its name can).
using ConstraintRegistry = std::map<std::string, std::function<bool(const Config&)>, std::less<>>;

class ConfigSpace {
 public:
  // Adds a parameter. Throws kiln::Error naming it when the list is empty,
  // the name is taken or empty, or the values mix types or repeat.
  ConfigSpace& param(std::string name, std::vector<Value> values);
  // Typed shorthands. Separate overloads so that {true, false} stays bool and
  // {"row", "col"} stays a string (one generic overload would convert both).
  ConfigSpace& param(std::string name, std::initializer_list<int> values);
  ConfigSpace& param(std::string name, std::initializer_list<std::int64_t> values);
  ConfigSpace& param(std::string name, std::initializer_list<bool> values);
  ConfigSpace& param(std::string name, std::initializer_list<const char*> values);
  ConfigSpace& constraint(std::string name, std::function<bool(const Config&)> predicate);
  // A constraint on config and device. Until for_device() binds the space,
  // enumerating or checking a config throws kiln::Error naming it (a space
  // must not silently admit configs meant for another machine).
  ConfigSpace& device_constraint(std::string name, DeviceConstraintFn predicate);
  // This space for one device: every device constraint becomes an ordinary
  // constraint reading `device`, and the device's summary() enters to_json()
  // (so the definition hash, hence tuning records, differ by device).
  // Throws when the space is already bound.
  ConfigSpace for_device(const DeviceTraits& device) const;
  // The device the space was bound to; nullptr when unbound.
  const DeviceTraits* device() const { return device_ ? &*device_ : nullptr; }
  const std::vector<DeviceConstraint>& device_constraints() const { return device_constraints_; }
  // The config used without tuning. Throws unless it is a member of the space
  // (every parameter, values in range, every constraint satisfied).
  ConfigSpace& default_config(Config config);

  const std::vector<Parameter>& parameters() const { return params_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  const Parameter* find(std::string_view name) const;

  // Product of the value-list sizes: the space before constraints.
  std::uint64_t cartesian_size() const;
  // Every config that satisfies every constraint, in a deterministic order:
  // parameters vary like an odometer, the last declared fastest.
  std::vector<Config> enumerate() const;
  // Number of configs enumerate() returns.
  std::uint64_t size() const;
  // enumerate() filtered by a further predicate.
  std::vector<Config> filter(const std::function<bool(const Config&)>& keep) const;
  // The first config in enumerate() order that satisfies every constraint
  // and `keep` (null: any), looking at no more than `max_scan` candidates of
  // the unconstrained order: a huge space is never enumerated to find it.
  std::optional<Config> first_where(const std::function<bool(const Config&)>& keep,
                                    std::uint64_t max_scan) const;
  // The config at position `index` of the unconstrained odometer order
  // (0 <= index < cartesian_size()); used by samplers of huge spaces.
  Config config_at(std::uint64_t index) const;

  // Throws kiln::Error naming the first unknown, missing or out-of-range
  // parameter. Constraints are not checked here.
  void check_members(const Config& config) const;
  // Names of the constraints `config` violates (empty when it satisfies all).
  std::vector<std::string> violated(const Config& config) const;
  bool contains(const Config& config) const;

  // The explicit default if one was set, else the first enumerated config
  // (found among the first kDefaultScanLimit candidates). Throws when there
  // is none.
  static constexpr std::uint64_t kDefaultScanLimit = 1u << 20;
  Config default_config() const;
  bool has_explicit_default() const { return default_.has_value(); }

  // JSON carries parameters, constraint names and the default; predicates are
  // bound again from `registry` by name in from_json (unknown name: error).
  nlohmann::json to_json() const;
  static ConfigSpace from_json(const nlohmann::json& json, const ConstraintRegistry& registry = {});

 private:
  bool satisfies(const Config& config) const;
  // Calls `each` on every config of the unconstrained odometer order until
  // it returns false.
  void visit(const std::function<bool(const Config&)>& each) const;

  std::vector<Parameter> params_;
  void require_bound() const;

  std::vector<Constraint> constraints_;
  std::vector<DeviceConstraint> device_constraints_;  // unbound; empty once bound
  std::optional<DeviceTraits> device_;
  std::optional<Config> default_;
};

}  // namespace kiln
