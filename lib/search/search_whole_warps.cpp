#include "search/internal/search_whole_warps.hpp"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace kiln::internal {
namespace {

constexpr std::int64_t kWarp = 32;       // threads along x: one warp's row
constexpr std::int64_t kWavefront = 64;  // threads in all: whole wavefronts

bool integer_parameter(const ConfigSpace& space, const char* name) {
  const Parameter* p = space.find(name);
  return p && p->type == ValueType::kInt;
}

}  // namespace

std::optional<Constraint> whole_warps_rule(const ConfigSpace& space) {
  if (!integer_parameter(space, "block_size_x")) return std::nullopt;
  const bool has_y = integer_parameter(space, "block_size_y");
  const bool has_z = integer_parameter(space, "block_size_z");
  return Constraint{"thread block of whole warps", [has_y, has_z](const Config& c) {
                      const std::int64_t x = c.get_int("block_size_x");
                      const std::int64_t y = has_y ? c.get_int("block_size_y") : 1;
                      const std::int64_t z = has_z ? c.get_int("block_size_z") : 1;
                      return x > 0 && x % kWarp == 0 && (x * y * z) % kWavefront == 0;
                    }};
}

ConfigSpace whole_warps_space(const ConfigSpace& space, const Constraint& rule) {
  ConfigSpace narrowed;
  for (const Parameter& p : space.parameters()) {
    std::vector<Value> values = p.values;
    if (p.name == "block_size_x")
      std::erase_if(values, [](const Value& v) { return std::get<std::int64_t>(v) % kWarp != 0; });
    // A space whose x values are all off the warp keeps its lists: the rule
    // then admits nothing and the caller finds the part empty.
    narrowed.param(p.name, values.empty() ? p.values : std::move(values));
  }
  // A bound space's device constraints are among its constraints already.
  for (const Constraint& c : space.constraints()) narrowed.constraint(c.name, c.predicate);
  narrowed.constraint(rule.name, rule.predicate);
  return narrowed;
}

}  // namespace kiln::internal
