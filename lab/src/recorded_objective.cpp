// The objective of a recorded space (recorded_objective.hpp).
#include "recorded_objective.hpp"

#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace kiln::detail {
namespace {

// Kernel Tuner's directions for the objectives it knows
// (kernel_tuner/file_utils.py, objective_default_map): it refuses any other
// objective unless told objective_higher_is_better.
constexpr std::array<std::pair<const char*, bool>, 10> kKnown{{{"time", false},
                                                               {"energy", false},
                                                               {"GFLOP/s", true},
                                                               {"TFLOP/s", true},
                                                               {"GB/s", true},
                                                               {"TB/s", true},
                                                               {"GFLOPS/W", true},
                                                               {"TFLOPS/W", true},
                                                               {"GFLOP/J", true},
                                                               {"TFLOP/J", true}}};

}  // namespace

Result<Objective> read_objective(const nlohmann::json& file, const std::string& where) {
  Objective out;
  if (const auto it = file.find("objective"); it != file.end() && !it->is_null()) {
    if (!it->is_string() || it->get<std::string>().empty())
      return make_error(ErrorCode::kInvalidArgument,
                        where + ": its \"objective\" is " + it->dump() +
                            ", not the name of a record's field (such as \"time\" or "
                            "\"GFLOP/s\")");
    out.name = it->get<std::string>();
  }
  if (const auto it = file.find("objective_higher_is_better"); it != file.end() && !it->is_null()) {
    if (!it->is_boolean())
      return make_error(
          ErrorCode::kInvalidArgument,
          where + ": its \"objective_higher_is_better\" is " + it->dump() + ", not true or false");
    out.higher_is_better = it->get<bool>();
    return out;
  }
  for (const auto& [name, higher] : kKnown)
    if (out.name == name) {
      out.higher_is_better = higher;
      return out;
    }
  return make_error(ErrorCode::kInvalidArgument,
                    where + ": its objective \"" + out.name +
                        "\" has no known direction (Kernel Tuner knows time, energy, GFLOP/s, "
                        "TFLOP/s, GB/s, TB/s, GFLOPS/W, TFLOPS/W, GFLOP/J and TFLOP/J): add "
                        "\"objective_higher_is_better\": true or false to the file");
}

std::variant<double, std::string> objective_figure(const nlohmann::json& record,
                                                   const Objective& objective) {
  const auto it = record.find(objective.name);
  if (it == record.end())
    throw std::invalid_argument("it has a run time but no \"" + objective.name +
                                "\", the file's objective: add the figure, or fail the config "
                                "with a failure's name as its time");
  if (!it->is_number()) return objective.name + " " + it->dump();
  const double v = it->get<double>();
  if (!(v > 0) || !std::isfinite(v))
    return objective.name + " " + it->dump() + " is not a positive figure";
  return v;
}

void rank_by_objective(RecordedSpace& out) {
  const RecordedConfig* best = nullptr;
  for (const RecordedConfig& rc : out.configs) {
    if (!rc.time_ms) continue;
    const bool better = !best || (out.higher_is_better ? rc.objective > best->objective
                                                       : rc.objective < best->objective);
    if (better) best = &rc;
  }
  if (!best) return;
  out.optimum = best->objective;
  out.optimum_ms = best->run_ms;
  if (out.by_time()) return;  // time_ms is the run time already, bit for bit
  for (RecordedConfig& rc : out.configs)
    if (rc.time_ms)
      rc.time_ms = out.optimum_ms *
                   (out.higher_is_better ? out.optimum / rc.objective : rc.objective / out.optimum);
}

}  // namespace kiln::detail
